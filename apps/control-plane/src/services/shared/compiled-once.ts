import { hash } from 'node:crypto';
import { directQueryOf } from '@skiff/db';
import { type Compilable, CompiledQuery, type Kysely } from 'kysely';

/**
 * A query whose shape never changes, built and compiled by Kysely once: each run only puts its
 * values in. For a read by id, building the query tree, the camel-case plugin's pass over it and
 * compiling cost more than the driver's own work.
 *
 * `build` gets a stand-in text for each named value and must pass it where the value goes
 * (`where('id', '=', slot.id)`); it must not branch on it. Kysely sends every value as a
 * parameter, so a stand-in is found among the parameters and replaced there. Values that vary
 * in number go as one array (`where('id', '=', sql\`any(${slot.ids})\`)`), never an `in` list.
 *
 * Outside a transaction it runs on the pool or the PGlite thread itself (`directQueryOf`). On
 * PostgreSQL it runs as a named prepared statement: planning it was most of the database's work
 * for a read by id (GET project.one: ~600 of ~700 µs of PostgreSQL's CPU a request); PGlite's
 * thread prepares every statement with parameters by its text. Its answer must name its columns
 * (no `*`, `selectAll`, `returningAll`): refused when first run otherwise.
 */
export function compiledOnce<K extends string, R>(
  names: readonly K[],
  build: (db: Kysely<any>, slot: Record<K, string>) => Compilable<R>,
): (db: Kysely<any>, values: Record<K, unknown>) => Promise<R[]> {
  const slot = Object.fromEntries(names.map((n) => [n, `\u0000slot:${n}`])) as Record<K, string>;
  let compiled: { sql: string; parameters: readonly unknown[]; at: Map<number, K>; name: string } | undefined;
  return async (db, values) => {
    if (!compiled) {
      const q = build(db, slot).compile();
      const at = new Map<number, K>();
      q.parameters.forEach((p, i) => {
        const name = names.find((n) => slot[n] === p);
        if (name) at.set(i, name);
      });
      const missing = names.filter((n) => ![...at.values()].includes(n));
      if (missing.length) throw new Error(`compiledOnce: ${missing.join(', ')} not among the query's parameters`);
      if (EVERY_COLUMN.test(q.sql)) throw new Error(`compiledOnce: name the columns of the answer, not *: ${q.sql}`);
      compiled = { sql: q.sql, parameters: q.parameters, at, name: `skiff_${hash('sha256', q.sql, 'hex').slice(0, 32)}` };
    }
    const { at } = compiled;
    const parameters = compiled.parameters.map((p, i) => {
      const name = at.get(i);
      return name === undefined ? p : values[name];
    });
    const direct = directQueryOf(db);
    if (direct) return (await direct(compiled.sql, parameters, compiled.name)) as R[];
    const { rows } = await db.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<R>);
    return rows;
  };
}

/** `select *`, `select "t".*`, `, "t".*`, `returning *`: columns whatever the table has when the statement is prepared. */
const EVERY_COLUMN = /(?:\bselect|\breturning|,)\s*(?:"[^"]*"\.)?\*/i;
