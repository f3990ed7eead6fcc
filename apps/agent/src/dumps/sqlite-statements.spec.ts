import { describe, expect, it } from 'vitest';
import { DumpStatements, SqliteStatements, withoutNuls } from './sqlite-statements.js';

const split = (pieces: string[]) => {
  const reader = new SqliteStatements();
  const statements = pieces.flatMap((p) => reader.push(p));
  return { statements, rest: reader.end() };
};

// What libsql-server's GET /dump writes, and what a schema's author may have written in it.
const DUMP = [
  'PRAGMA foreign_keys=OFF;',
  'BEGIN TRANSACTION;',
  'CREATE TABLE IF NOT EXISTS "odd;name"(id integer primary key, [a;b] text, `c;` blob); -- a ; in a comment',
  "INSERT INTO \"odd;name\" VALUES(1,replace('''a\\nb;','\\n',char(10)),X'00ff');",
  "INSERT INTO \"odd;name\" VALUES(2,'it''s; -- not a comment /* nor this */',NULL);",
  '/* a block; comment */ CREATE TABLE u(a);',
  'CREATE TRIGGER tr AFTER INSERT ON "odd;name" BEGIN\n  INSERT INTO u VALUES (1);\n  SELECT CASE WHEN 1 THEN 2 END;\nEND;',
  'CREATE TEMP TRIGGER tt AFTER DELETE ON u BEGIN DELETE FROM u; END;',
  'CREATE VIEW v AS SELECT a - 1 AS x, 4/2 AS y FROM u;',
  'EXPLAIN CREATE TRIGGER t3 AFTER INSERT ON u BEGIN SELECT 1; END;',
  'CREATE INDEX ix ON "odd;name"([a;b]);',
  'COMMIT;',
];
const TEXT = DUMP.join('\n') + '\n';

describe('SqliteStatements', () => {
  it('cuts a dump into its statements, whole', () => {
    const { statements, rest } = split([TEXT]);
    // The comment after the third statement's `;` begins the fourth.
    const expected = [...DUMP];
    expected[2] = expected[2]!.replace(' -- a ; in a comment', '');
    expected[3] = `-- a ; in a comment\n${expected[3]}`;
    expect(statements).toEqual(expected);
    expect(rest).toBeNull();
  });

  it('cuts it the same wherever the pieces end', () => {
    const whole = split([TEXT]).statements;
    for (let at = 0; at <= TEXT.length; at++) {
      expect(split([TEXT.slice(0, at), TEXT.slice(at)]).statements, `cut at ${at}`).toEqual(whole);
    }
    expect(split([...TEXT]).statements).toEqual(whole);
  });

  it('does not end a trigger at a ; inside its body', () => {
    const { statements } = split(['CREATE TRIGGER t AFTER INSERT ON u BEGIN INSERT INTO u VALUES(1); INSERT INTO u VALUES(2); END; SELECT 1;']);
    expect(statements).toEqual(['CREATE TRIGGER t AFTER INSERT ON u BEGIN INSERT INTO u VALUES(1); INSERT INTO u VALUES(2); END;', 'SELECT 1;']);
  });

  it('says what an unfinished dump leaves', () => {
    expect(split(["INSERT INTO u VALUES('open"]).rest).toBe("INSERT INTO u VALUES('open");
    expect(split(['INSERT INTO u VALUES(1)']).rest).toBe('INSERT INTO u VALUES(1)');
    expect(split(['CREATE TRIGGER t AFTER INSERT ON u BEGIN SELECT 1;']).rest).toBe('CREATE TRIGGER t AFTER INSERT ON u BEGIN SELECT 1;');
    expect(split(['SELECT 1; /* open comment']).rest).toBe('/* open comment');
    expect(split(['SELECT 1;\n-- the end\n  ']).rest).toBeNull();
    expect(split([';;']).statements).toEqual([]);
  });

  it('holds only the statement being read', () => {
    const reader = new SqliteStatements();
    reader.push('SELECT 1; SELECT ');
    expect(reader.pendingLength).toBe(' SELECT '.length);
    reader.push('2;');
    expect(reader.pendingLength).toBe(0);
  });

  it('writes a text literal holding NULs as the cast of its bytes, and nothing else', () => {
    expect(withoutNuls("INSERT INTO \"it's\" VALUES('a\0b''c',X'00',1);")).toBe(
      `INSERT INTO "it's" VALUES(CAST(X'${Buffer.from("a\0b'c").toString('hex')}' AS TEXT),X'00',1);`,
    );
    expect(withoutNuls("INSERT INTO [a'b] VALUES('\0é\0'); -- 'x\0")).toBe(`INSERT INTO [a'b] VALUES(CAST(X'00c3a900' AS TEXT)); -- 'x\0`);
    expect(withoutNuls("INSERT INTO t VALUES('plain');")).toBe("INSERT INTO t VALUES('plain');");
  });

  it('reads a virtual table’s sqlite_schema row as libsql-server writes it (quotes not doubled), or as sqlite3 does, wherever the pieces end', () => {
    const create = "CREATE VIRTUAL TABLE \"it's ext\" USING fts5(body, content='src',\n  tokenize = 'porter ascii')";
    const dump = [
      'PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nPRAGMA writable_schema=ON;',
      `INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql) VALUES('table','it's ext','it's ext',0,'${create}');`,
      "CREATE TABLE IF NOT EXISTS 'it''s ext_data'(id INTEGER PRIMARY KEY, block BLOB);",
      `INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','f''s','f''s',0,'CREATE VIRTUAL TABLE "f''s" USING fts4(a, tokenize=''x'')');`,
      'PRAGMA writable_schema=OFF;\nCOMMIT;\n',
    ].join('\n');
    const expected = [
      { sql: 'PRAGMA foreign_keys=OFF;' }, { sql: 'BEGIN TRANSACTION;' }, { sql: 'PRAGMA writable_schema=ON;' },
      { virtualTable: create },
      { sql: "CREATE TABLE IF NOT EXISTS 'it''s ext_data'(id INTEGER PRIMARY KEY, block BLOB);" },
      { virtualTable: `CREATE VIRTUAL TABLE "f's" USING fts4(a, tokenize='x')` },
      { sql: 'PRAGMA writable_schema=OFF;' }, { sql: 'COMMIT;' },
    ];
    for (let at = 0; at <= dump.length; at++) {
      const reader = new DumpStatements();
      const statements = [...reader.push(dump.slice(0, at)), ...reader.push(dump.slice(at))];
      const { statements: last, rest } = reader.end();
      expect([...statements, ...last], `cut at ${at}`).toEqual(expected);
      expect(rest).toBeNull();
    }
  });

  it('refuses a sqlite_schema row that is not a virtual table’s, and says what a cut one leaves', () => {
    expect(() => new DumpStatements().push("INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql) VALUES('table','t','t',2,'CREATE TABLE t(a)');\n")).toThrow(
      /writes into sqlite_schema what is not a virtual table/,
    );
    const reader = new DumpStatements();
    expect(reader.push("INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql) VALUES('table','v','v',0,'CREATE VIRTUAL TABLE v USING fts5(\n")).toEqual([]);
    expect(reader.end().rest).toMatch(/^INSERT INTO sqlite_schema/);
  });
});
