import { describe, expect, it } from 'vitest';
import { parseDotenv } from './dotenv.js';

const vars = (text: string) => Object.fromEntries(parseDotenv(text).variables);
const issues = (text: string) => parseDotenv(text).issues;

describe('parseDotenv', () => {
  it('reads KEY=VALUE lines, skipping blank lines and comments', () => {
    const text = ['# database', 'HOST=db', '', '   ', '  # indented comment', 'PORT=5432', 'EMPTY='].join('\n');
    expect(parseDotenv(text)).toEqual({
      variables: new Map([
        ['HOST', 'db'],
        ['PORT', '5432'],
        ['EMPTY', ''],
      ]),
      issues: [],
    });
  });

  it('accepts an export prefix, spaces around "=", and CRLF line ends', () => {
    expect(vars('export A=1\r\nexport\tB = two words \r\n  C=3')).toEqual({ A: '1', B: 'two words', C: '3' });
    expect(vars('export=yes')).toEqual({ export: 'yes' });
  });

  it('keeps "#" inside an unquoted value unless whitespace precedes it', () => {
    expect(vars('URL=http://x/#top\nPASS=a#b\nC=value # comment\nD= # only a comment')).toEqual({
      URL: 'http://x/#top',
      PASS: 'a#b',
      C: 'value',
      D: '',
    });
  });

  it('keeps everything after the first "=" in the value', () => {
    expect(vars('DSN=postgres://u:p@h/db?sslmode=require&x=1')).toEqual({ DSN: 'postgres://u:p@h/db?sslmode=require&x=1' });
  });

  it('keeps single-quoted values literally', () => {
    expect(vars(String.raw`A='a\nb "c" # not a comment'`)).toEqual({ A: String.raw`a\nb "c" # not a comment` });
  });

  it('understands \\n, \\r, \\t, \\" and \\\\ in double quotes, and keeps other backslashes', () => {
    expect(vars(String.raw`A="line1\nline2\t\"q\" \\ \d"`)).toEqual({ A: 'line1\nline2\t"q" \\ \\d' });
    expect(vars(String.raw`B="\r"`)).toEqual({ B: '\r' });
  });

  it('allows quoted values over several lines and a comment after the closing quote', () => {
    const text = ['KEY="-----BEGIN KEY-----', 'abc', '-----END KEY-----"  # pem', "S='x", "y'", 'NEXT=1'].join('\n');
    expect(vars(text)).toEqual({ KEY: '-----BEGIN KEY-----\nabc\n-----END KEY-----', S: 'x\ny', NEXT: '1' });
  });

  it('keeps quote characters inside unquoted values and whitespace inside quoted ones', () => {
    expect(vars(`A=it's\nB="  padded  "\nC='  '`)).toEqual({ A: "it's", B: '  padded  ', C: '  ' });
  });

  it('does no shell expansion', () => {
    expect(vars('A=$HOME\nB="${USER}"\nC=`id`\nD=$(whoami)')).toEqual({ A: '$HOME', B: '${USER}', C: '`id`', D: '$(whoami)' });
  });

  it('keeps the last value of a name given twice, in its first position', () => {
    expect([...parseDotenv('A=1\nB=2\nA=3').variables]).toEqual([
      ['A', '3'],
      ['B', '2'],
    ]);
  });

  it('treats __proto__ as an ordinary name', () => {
    expect(parseDotenv('__proto__=x').variables.get('__proto__')).toBe('x');
  });

  it('reports every bad line with its number and still reads the good ones', () => {
    const text = ['GOOD=1', 'no equals sign', '1BAD=x', '=nothing', 'BAD-NAME=x', 'ALSO_GOOD=2'].join('\n');
    const parsed = parseDotenv(text);
    expect(parsed.issues).toEqual([
      { line: 2, message: 'expected KEY=VALUE' },
      { line: 3, message: '"1BAD" is not a valid variable name (letters, digits and _, not starting with a digit)' },
      { line: 4, message: 'missing variable name before "="' },
      { line: 5, message: '"BAD-NAME" is not a valid variable name (letters, digits and _, not starting with a digit)' },
    ]);
    expect(Object.fromEntries(parsed.variables)).toEqual({ GOOD: '1', ALSO_GOOD: '2' });
  });

  it('reports an unterminated quote on its opening line and goes on with the next line', () => {
    expect(parseDotenv('A=1\nB="never closed\nC=3')).toEqual({
      variables: new Map([
        ['A', '1'],
        ['C', '3'],
      ]),
      issues: [{ line: 2, message: 'unterminated double-quoted value' }],
    });
    expect(issues("X='open")).toEqual([{ line: 1, message: 'unterminated single-quoted value' }]);
  });

  it('refuses text after a closing quote without quoting the value', () => {
    expect(issues('SECRET="hunter2"trailing')).toEqual([{ line: 1, message: 'unexpected text after the closing quote' }]);
  });

  it('reports a bad name of a multi-line value on its first line and skips the whole value', () => {
    expect(parseDotenv('1X="a\nb"\nY=2')).toEqual({
      variables: new Map([['Y', '2']]),
      issues: [{ line: 1, message: expect.stringContaining('"1X" is not a valid variable name') }],
    });
  });

  it('gives nothing for empty text', () => {
    expect(parseDotenv('')).toEqual({ variables: new Map(), issues: [] });
  });
});
