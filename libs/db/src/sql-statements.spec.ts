import { describe, expect, it } from 'vitest';
import { SqlStatements, sqlStatements } from './sql-statements.js';

function split(pieces: string[]): string[] {
  const s = new SqlStatements();
  const out: string[] = [];
  for (const p of pieces) out.push(...s.push(p).map((st) => st.sql));
  out.push(...s.end().map((st) => st.sql));
  return out;
}

/** Every form the dump can hold, each with a `;` (and the other quotes) inside. */
const TRICKY = [
  `SET standard_conforming_strings = on;`,
  `-- a comment; with 'a quote' and "a name" and $$ and /* a star\nSELECT 'semi;colon', 'it''s; '' quoted', '\\';`,
  `SELECT E'back\\\\slash\\' ; '' \\n', e'\\';', E'';`,
  `SELECT typE'\\';`,
  `CREATE TABLE "semi;colon ""$x$"" --"."t;""q" ("a$b" text, x$y$z int);`,
  `CREATE FUNCTION f() RETURNS text AS $_$ begin return 'a;b'' $$ -- no /* no'; end; $_$ LANGUAGE plpgsql;`,
  `SELECT $$;'"$$, $ünï$;$ünï$, $a$ $b$ ; $b$ $a$, $1;`,
  `/* a /* nested; */ comment ' with " quotes; */ SELECT 1 /* ; */ - -1 / 2;`,
  `INSERT INTO t VALUES ('line\nbreak; -- not a comment\n/* nor this */', NULL), ('ünï ☃ 𝄞 ;');`,
].join('\n');

const EXPECTED = [
  `SET standard_conforming_strings = on;`,
  `SELECT 'semi;colon', 'it''s; '' quoted', '\\';`,
  `SELECT E'back\\\\slash\\' ; '' \\n', e'\\';', E'';`,
  `SELECT typE'\\';`,
  `CREATE TABLE "semi;colon ""$x$"" --"."t;""q" ("a$b" text, x$y$z int);`,
  `CREATE FUNCTION f() RETURNS text AS $_$ begin return 'a;b'' $$ -- no /* no'; end; $_$ LANGUAGE plpgsql;`,
  `SELECT $$;'"$$, $ünï$;$ünï$, $a$ $b$ ; $b$ $a$, $1;`,
  `SELECT 1   - -1 / 2;`,
  `INSERT INTO t VALUES ('line\nbreak; -- not a comment\n/* nor this */', NULL), ('ünï ☃ 𝄞 ;');`,
];

describe('the statements of a dump', () => {
  it('ends a statement only at a ; outside strings, names, dollar bodies and comments, and leaves the comments out', () => {
    expect(split([TRICKY])).toEqual(EXPECTED);
  });

  it('gives the same statements whatever the pieces the text arrives in: cut at every offset, and one character at a time', () => {
    for (let k = 0; k <= TRICKY.length; k++) expect(split([TRICKY.slice(0, k), TRICKY.slice(k)]), `cut at ${k}`).toEqual(EXPECTED);
    for (const size of [1, 2, 3, 5]) {
      const pieces: string[] = [];
      for (let k = 0; k < TRICKY.length; k += size) pieces.push(TRICKY.slice(k, k + size));
      expect(split(pieces), `pieces of ${size}`).toEqual(EXPECTED);
    }
  });

  it('numbers the statements and skips empty ones', async () => {
    async function* text() {
      yield '; ;\n-- only a comment;\n';
      yield 'SELECT 1;;SELECT 2;';
    }
    const out = [];
    for await (const st of sqlStatements(text())) out.push(st);
    expect(out).toEqual([
      { sql: 'SELECT 1;', ordinal: 1 },
      { sql: 'SELECT 2;', ordinal: 2 },
    ]);
  });

  it('refuses a dump cut short: inside a string, a name, a dollar body, a comment, or a statement', () => {
    expect(() => split(["SELECT 'unfinished;"])).toThrow(/ends inside a quoted string/);
    expect(() => split(["SELECT E'unfinished\\';"])).toThrow(/ends inside a quoted string/);
    expect(() => split(['SELECT "unfinished;'])).toThrow(/ends inside a quoted name/);
    expect(() => split(['SELECT $x$ unfinished; $y$;'])).toThrow(/ends inside a dollar-quoted body/);
    expect(() => split(['SELECT 1; /* unfinished /* */'])).toThrow(/ends inside a block comment/);
    expect(() => split(["INSERT INTO t VALUES (1), ('2')"])).toThrow(/ends in the middle of a statement/);
    expect(split(['SELECT 1; -- a last comment without a newline'])).toEqual(['SELECT 1;']);
  });

  it('refuses what only psql loads: COPY … FROM stdin and backslash commands', () => {
    expect(() => split(['SET x = 1;\n--\n-- Data\n--\nCOPY public.t (a, b) FROM stdin;\n1\t2\n\\.\n'])).toThrow(/statement 2 is a COPY … FROM stdin/);
    expect(() => split(['\\restrict abc\nSELECT 1;'])).toThrow(/statement 1 is a psql command \(\\restrict\)/);
    // Inside a statement a backslash is SQL's to refuse; a COPY to a file is SQL too.
    expect(split(["SELECT 1 \\ 2; COPY t FROM '/dev/blob';"])).toEqual(['SELECT 1 \\ 2;', "COPY t FROM '/dev/blob';"]);
  });

  it('reads a long $name that does not end once, not again with every piece (hostile input stays linear)', () => {
    const s = new SqlStatements();
    const piece = 'a'.repeat(64 * 1024);
    const started = performance.now();
    const out = s.push('SELECT $');
    // 32 MB of name characters after a `$`: read again at each piece, this took some 20 s.
    for (let k = 0; k < 512; k++) out.push(...s.push(piece));
    out.push(...s.push(' + 1; SELECT $1 $_$;$_$;'), ...s.end());
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(out.map((st) => st.sql.length)).toEqual([8 + 512 * piece.length + 5, 'SELECT $1 $_$;$_$;'.length]);
  });

  it('carries at most the start of a long $tag$ from piece to piece, not the tag’s length each time (hostile input stays linear)', () => {
    const s = new SqlStatements();
    const tag = `$${'t'.repeat(8 * 1024 * 1024)}$`;
    const piece = 'b'.repeat(64 * 1024);
    const started = performance.now();
    const out = s.push(`SELECT ${tag}`);
    // 64 MB of body inside an 8 MB tag: carrying the tag's length into each piece read 8 MB again per piece (some 10 s).
    for (let k = 0; k < 1024; k++) out.push(...s.push(piece));
    // The closing tag split across two pieces is still found.
    out.push(...s.push(tag.slice(0, 1000)), ...s.push(`${tag.slice(1000)};`), ...s.end());
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(out.map((st) => st.sql.length)).toEqual([7 + 2 * tag.length + 1024 * piece.length + 1]);
  });
});
