import { describe, expect, it } from 'vitest';
import { CommandSplitError, splitCommand } from './argv.js';

describe('splitCommand', () => {
  it('splits on whitespace of any length', () => {
    expect(splitCommand('  node   dist/main.js\t--port 3000\n')).toEqual(['node', 'dist/main.js', '--port', '3000']);
  });

  it('keeps single-quoted text literally', () => {
    expect(splitCommand(String.raw`echo 'a  b' 'c\d' '"e"'`)).toEqual(['echo', 'a  b', String.raw`c\d`, '"e"']);
  });

  it('understands \\" and \\\\ in double quotes and keeps other backslashes', () => {
    expect(splitCommand(String.raw`say "a \"b\" \\ \n $HOME"`)).toEqual(['say', String.raw`a "b" \ \n $HOME`]);
  });

  it('joins quotes with adjacent text and keeps empty quoted arguments', () => {
    expect(splitCommand(`--name="a b"x 'c'"d" '' ""`)).toEqual(['--name=a bx', 'cd', '', '']);
  });

  it('makes the next character literal after a backslash outside quotes', () => {
    expect(splitCommand(String.raw`cat a\ b \'c trailing\\`)).toEqual(['cat', 'a b', "'c", 'trailing\\']);
    expect(splitCommand('end\\')).toEqual(['end\\']);
  });

  it('gives shell operators no meaning', () => {
    expect(splitCommand('npm start && rm -rf / ; echo $(id) | sh > /tmp/x *')).toEqual([
      'npm', 'start', '&&', 'rm', '-rf', '/', ';', 'echo', '$(id)', '|', 'sh', '>', '/tmp/x', '*',
    ]);
  });

  it('gives no words for blank text', () => {
    expect(splitCommand('')).toEqual([]);
    expect(splitCommand('   ')).toEqual([]);
  });

  it('refuses an unterminated quote', () => {
    expect(() => splitCommand(`echo "open`)).toThrow(new CommandSplitError('Unterminated double quote in command: echo "open'));
    expect(() => splitCommand(`echo 'open`)).toThrow(/Unterminated single quote/);
  });
});
