/**
 * The data section of the embedded database's plain SQL dump, built in bounded pieces: each
 * table's rows read through a cursor in one REPEATABLE READ, read-only transaction, a few at a
 * time, and written as multi-row INSERTs; then each sequence's value. PGlite's pg_dump writes
 * its whole output into an in-memory file, so it dumps only the schema (pglite-thread.ts), and
 * the rows come from here: the memory a dump needs is one piece's, whatever the database's size.
 *
 * The literals are made by the server (quote_nullable of each column's text form), so every
 * type comes back as what its input function reads: INSERTs load with psql into PostgreSQL as
 * well as with PGlite's exec (pglite-restore.ts), which takes no COPY data inline.
 */

/** A statement on the dumping session (the thread's own, which nothing else uses meanwhile). */
export type DumpQuery = (sql: string, params: readonly unknown[]) => Promise<{ rows: unknown[] }>;

export interface DumpLimits {
  /** The most rows one FETCH asks for. */
  maxRows: number;
  /** The text a piece aims at: the next FETCH asks for as many rows as fit, by the rows read so far. */
  pieceChars: number;
}

export const DUMP_LIMITS: DumpLimits = { maxRows: 1000, pieceChars: 1 << 20 };

/** How fast the rows per FETCH may grow: a table whose first rows are small may hold large ones further on. */
const GROWTH = 8;

interface Table {
  name: string;
  columns: string;
  literals: string;
  overriding: boolean;
}

/** Tables with rows of their own (not partitioned parents, not an extension's), in a stable order. */
const TABLES = `
  select format('%I.%I', n.nspname, c.relname) as name,
         string_agg(format('%I', a.attname), ', ' order by a.attnum) as columns,
         string_agg(format('quote_nullable(%I)', a.attname), ', ' order by a.attnum) as literals,
         bool_or(a.attidentity = 'a') as overriding
    from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
   where c.relkind = 'r' and n.nspname <> 'information_schema' and n.nspname !~ '^pg_'
     and not exists (select 1 from pg_catalog.pg_depend d
                      where d.classid = 'pg_catalog.pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
   group by n.nspname, c.relname
   order by n.nspname, c.relname`;

const SEQUENCES = `
  select format('%I.%I', n.nspname, c.relname) as name
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
   where c.relkind = 'S' and n.nspname <> 'information_schema' and n.nspname !~ '^pg_'
     and not exists (select 1 from pg_catalog.pg_depend d
                      where d.classid = 'pg_catalog.pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
   order by 1`;

/**
 * The text forms the literals are read in, whatever the session had: they only need to be
 * what the input functions take back (ISO dates, hex bytea, floats exact).
 */
const SETTINGS = `select set_config('bytea_output', 'hex', true), set_config('DateStyle', 'ISO', true),
  set_config('IntervalStyle', 'postgres', true), set_config('extra_float_digits', '3', true)`;

export async function* dataSection(query: DumpQuery, limits: DumpLimits = DUMP_LIMITS): AsyncGenerator<string> {
  await query('start transaction isolation level repeatable read, read only', []);
  let open = true;
  try {
    await query(SETTINGS, []);
    const tables = (await query(TABLES, [])).rows as Table[];
    const sequences = (await query(SEQUENCES, [])).rows as { name: string }[];
    yield '\n--\n-- Data (Skiff: rows read in pieces, libs/db/src/pglite-dump.ts)\n--\n\n';
    for (const table of tables) yield* tableRows(query, table, limits);
    for (const { name } of sequences) {
      const { rows } = await query(`select format('SELECT pg_catalog.setval(%L, %s, %s);', $1::text, last_value, is_called::text) as v from ${name}`, [name]);
      yield `${(rows[0] as { v: string }).v}\n`;
    }
    await query('commit', []);
    open = false;
  } finally {
    // Also when the reader stopped early (the upload failed): the session is left as found.
    if (open) await query('rollback', []).catch(() => undefined);
  }
}

async function* tableRows(query: DumpQuery, table: Table, limits: DumpLimits): AsyncGenerator<string> {
  const head = `INSERT INTO ${table.name} (${table.columns})${table.overriding ? ' OVERRIDING SYSTEM VALUE' : ''} VALUES\n`;
  // A cursor left open by a reader that stopped early ends with the transaction's rollback.
  await query(`declare skiff_dump no scroll cursor for select '(' || concat_ws(', ', ${table.literals}) || ')' as v from only ${table.name}`, []);
  // One row first: its size says how many the next FETCH may ask for.
  let asked = 1;
  for (;;) {
    const rows = (await query(`fetch ${asked} from skiff_dump`, [])).rows as { v: string }[];
    if (rows.length === 0) break;
    let chars = 0;
    for (const r of rows) chars += r.v.length;
    yield `${head}${rows.map((r) => r.v).join(',\n')};\n\n`;
    if (rows.length < asked) break;
    const fit = Math.floor((limits.pieceChars * rows.length) / Math.max(chars, 1));
    asked = Math.max(1, Math.min(limits.maxRows, asked * GROWTH, fit));
  }
  await query('close skiff_dump', []);
}
