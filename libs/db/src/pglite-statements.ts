/**
 * How the database thread runs statements, as CommonJS text the worker of pglite-thread.ts runs
 * (it defines `preparedStatements(db, protocol, kept)`).
 *
 * PGlite's `query` parses, analyses and plans its statement on every call (the unnamed statement
 * of the extended protocol), calls into the WebAssembly six times (Parse, Describe, Bind,
 * Describe, Execute, Sync), and its `parseResults` copies every type parser (hundreds, with the
 * array types) into a new object per call: ~384 µs of CPU for a read by primary key whose
 * execution takes ~40 (`tools/bench-pglite-statements.ts`). Here a statement with parameters is
 * parsed once as a named prepared statement, by its text, and each call is one Bind/Execute/Sync
 * message (`query`); one without is parsed each time as the unnamed statement, as PGlite's
 * `query` does (DDL, a transaction's begin and end), but in one message too (`once`). Rows are
 * made with the columns' parsers looked up once.
 *
 * What stays as `query` answers it: the values are serialized by the parameter types Postgres
 * inferred, with PGlite's serializers (else `toString`); the rows by PGlite's parsers; an error
 * is PGlite's `DatabaseError` with the statement's text as `query`. The `kept` most recently
 * used statements are kept; the least recently used is closed in the message that parses a new
 * one. A statement prepared stays prepared whatever its transaction does. When a statement's
 * result type changes under it (a column added to a table it reads with `*`: "cached plan must
 * not change result type") or its prepared statement is gone (`DEALLOCATE`), it is prepared
 * again and, outside a transaction, run again; inside one the error stands, as the transaction
 * is aborted anyway. pg_dump's run in the session deallocates them all: the thread forgets them
 * after it (`reset`).
 */
export const PREPARED_STATEMENTS = `
function preparedStatements(db, protocol, kept) {
  const ser = protocol.serialize;
  /** By text: { name, types, columns }, the least recently used first. */
  const statements = new Map();
  /** Names of evicted or stale statements, closed with the next Parse. */
  let closing = [];
  let named = 0;
  const joined = (parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };
  const forget = (sql) => {
    const s = statements.get(sql);
    if (!s) return;
    statements.delete(sql);
    closing.push(s.name);
  };
  /** Each column's name and parser, from the RowDescription among these messages. */
  const columnsOf = (messages) =>
    (messages.find((m) => m.name === 'rowDescription')?.fields ?? []).map((f) => {
      const parser = db.parsers[f.dataTypeID];
      return { name: f.name, parse: parser ? (x) => parser(x, f.dataTypeID) : (x) => x };
    });
  const prepare = async (sql) => {
    while (statements.size > 0 && statements.size >= kept) forget(statements.keys().next().value);
    const name = 's' + named++;
    const closes = closing.map((n) => ser.close({ type: 'S', name: n }));
    const { messages } = await db.execProtocol(
      joined([...closes, ser.parse({ name, text: sql }), ser.describe({ type: 'S', name }), ser.sync()]),
    );
    closing = closing.slice(closes.length);
    const types = messages.find((m) => m.name === 'parameterDescription')?.dataTypeIDs ?? [];
    const s = { name, types, columns: columnsOf(messages) };
    statements.set(sql, s);
    return s;
  };
  const execute = async (s, params) => {
    const values = params.map((p, i) => {
      if (p === null || p === undefined) return null;
      const serialize = db.serializers[s.types[i]];
      return serialize ? serialize(p) : p.toString();
    });
    const { messages } = await db.execProtocol(joined([ser.bind({ statement: s.name, values }), ser.execute({}), ser.sync()]));
    return answerOf(messages, s.columns);
  };
  const answerOf = (messages, columns) => {
    const rows = [];
    let affectedRows = 0;
    for (const m of messages) {
      if (m.name === 'dataRow') {
        const row = {};
        for (let i = 0; i < m.fields.length; i++) {
          const x = m.fields[i];
          row[columns[i].name] = x === null ? null : columns[i].parse(x);
        }
        rows.push(row);
      } else if (m.name === 'commandComplete') {
        affectedRows = rowCount(m.text);
      }
    }
    return { rows, affectedRows };
  };
  const rowCount = (tag) => {
    const parts = tag.split(' ');
    if (parts[0] === 'INSERT') return parseInt(parts[2], 10);
    if (['UPDATE', 'DELETE', 'COPY', 'MERGE'].includes(parts[0])) return parseInt(parts[1], 10);
    return 0;
  };
  /** 0A000: cached plan must not change result type; 26000: no such prepared statement. */
  const stale = (err) => err && (err.code === '0A000' || err.code === '26000');
  return {
    /** A statement without parameters: the unnamed statement, as PGlite's \`query\`, in one message. */
    async once(sql) {
      try {
        const { messages } = await db.execProtocol(
          joined([ser.parse({ text: sql }), ser.bind({}), ser.describe({ type: 'P' }), ser.execute({}), ser.sync()]),
        );
        return answerOf(messages, columnsOf(messages));
      } catch (err) {
        if (err && typeof err === 'object') err.query = sql;
        throw err;
      }
    },
    async query(sql, params) {
      let s = statements.get(sql);
      try {
        if (s) {
          statements.delete(sql);
          statements.set(sql, s);
        } else {
          s = await prepare(sql);
        }
        try {
          return await execute(s, params);
        } catch (err) {
          if (!stale(err)) throw err;
          forget(sql);
          if (db.isInTransaction()) throw err;
          return await execute(await prepare(sql), params);
        }
      } catch (err) {
        if (err && typeof err === 'object') err.query = sql;
        throw err;
      }
    },
    /** Forgets every statement (pg_dump's run ends with them deallocated); each is closed anyway. */
    reset() {
      for (const sql of [...statements.keys()]) forget(sql);
    },
  };
}
`;
