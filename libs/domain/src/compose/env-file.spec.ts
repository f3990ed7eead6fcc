import { describe, expect, it } from 'vitest';
import { EnvError } from '../env.js';
import { composeDotenv, formatComposeDotenv } from './env-file.js';

/**
 * Reads a value the way Docker Compose's `.env` syntax documents it
 * (docs.docker.com/compose/environment-variables/variable-interpolation/#env-file-syntax),
 * for the forms `formatComposeDotenv` writes: unquoted (no `$` there), single-quoted
 * (literal, `\'` for a quote, may span lines), double-quoted (`\\ \" \n \r` escapes).
 */
function readComposeValue(written: string): string {
  if (written.startsWith("'")) {
    expect(written.endsWith("'")).toBe(true);
    return written.slice(1, -1).replaceAll("\\'", "'");
  }
  if (written.startsWith('"')) {
    expect(written.endsWith('"')).toBe(true);
    expect(written).not.toContain('$');
    return written.slice(1, -1).replace(/\\([\\"nr])/g, (_m, c: string) => ({ n: '\n', r: '\r' })[c] ?? c);
  }
  expect(written).toMatch(/^[^\s'"$#\\]*$/);
  return written;
}

const one = (value: string) => formatComposeDotenv(new Map([['V', value]]));

describe('formatComposeDotenv', () => {
  it.each([
    ['', 'V=\n'],
    ['plain', 'V=plain\n'],
    ['postgres://user:pw@db:5432/app?ssl=true', "V='postgres://user:pw@db:5432/app?ssl=true'\n"],
    ['a-b_c.d/e:f@g%h+i,j=k^l~m', 'V=a-b_c.d/e:f@g%h+i,j=k^l~m\n'],
    ['with space', "V='with space'\n"],
    [' padded ', "V=' padded '\n"],
    ['$HOME and ${X}', "V='$HOME and ${X}'\n"],
    ['$2y$10$abcdefghijklmnopqrstuv', "V='$2y$10$abcdefghijklmnopqrstuv'\n"],
    ['a # not a comment', "V='a # not a comment'\n"],
    ["it's", "V='it\\'s'\n"],
    ['say "hi"', `V='say "hi"'\n`],
    ['C:\\path\\x', "V='C:\\path\\x'\n"],
    ['line1\nline2', "V='line1\nline2'\n"],
    ["it's C:\\x", `V="it's C:\\\\x"\n`],
    ['trailing\\', `V="trailing\\\\"\n`],
    ['${{project.X}}', "V='${{project.X}}'\n"],
  ])('writes %j as %j', (value, expected) => {
    expect(one(value)).toBe(expected);
  });

  it.each([
    '',
    'x',
    'a b c',
    "quote ' and \\ backslash",
    'tab\there',
    '-----BEGIN KEY-----\nabc+/=\n-----END KEY-----\n',
    "mix 'single' \"double\" \\n literal",
    '\\',
    "\\'",
    'ünïcödé ✓',
    '#start',
    '=start',
    'ends with space ',
  ])('Compose reads %j back unchanged', (value) => {
    const line = one(value);
    expect(line.startsWith('V=')).toBe(true);
    expect(line.endsWith('\n')).toBe(true);
    expect(readComposeValue(line.slice(2, -1))).toBe(value);
  });

  it('refuses a value holding a quote, a backslash and a dollar, naming the variable but not the value', () => {
    const run = () => formatComposeDotenv(new Map([['SECRET', "p'a\\s$s"]]));
    expect(run).toThrow(EnvError);
    expect(run).toThrow('Environment variable SECRET cannot be written');
    expect(run).not.toThrow(/p'a/);
  });

  it('writes nothing for no variables, one line per variable in order otherwise', () => {
    expect(formatComposeDotenv(new Map())).toBe('');
    expect(formatComposeDotenv(new Map([['B', '1'], ['A', '2']]))).toBe('B=1\nA=2\n');
  });
});

describe('composeDotenv', () => {
  it('resolves the stack env like an application env: project, environment, then the stack, references substituted', () => {
    const text = composeDotenv({
      project: 'DB_HOST=db.internal\nSHARED=project',
      environment: 'SHARED=environment\nSTAGE=prod',
      service: 'DATABASE_URL=postgres://${{project.DB_HOST}}:5432/${{environment.STAGE}}\nSHARED=${{environment.SHARED}}-stack\nIMAGE_TAG=${TAG:-latest}',
    });
    expect(text).toBe(
      [
        'DB_HOST=db.internal',
        'SHARED=environment-stack',
        'STAGE=prod',
        'DATABASE_URL=postgres://db.internal:5432/prod',
        "IMAGE_TAG='${TAG:-latest}'",
        '',
      ].join('\n'),
    );
  });

  it('leaves Compose-style ${VAR} as text (Compose interpolates the compose file, not this file)', () => {
    expect(composeDotenv({ service: 'A=${B}\nB=x', environment: null, project: undefined })).toBe("A='${B}'\nB=x\n");
  });

  it('fails on an undefined reference, as application deploys do', () => {
    const run = () => composeDotenv({ service: 'A=${{project.MISSING}}', environment: '', project: '' });
    expect(run).toThrow(EnvError);
    expect(run).toThrow('Invalid environment variable: project.MISSING');
  });

  it('is empty for empty sources', () => {
    expect(composeDotenv({ service: null, environment: null, project: null })).toBe('');
  });
});
