import { directQueryOf } from '@skiff/db';
import { type Compilable, CompiledQuery, type Kysely } from 'kysely';

/**
 * A query whose shape never changes, built and compiled by Kysely once: each run only puts its
 * values in. For a read by id, building the query tree, the camel-case plugin's pass over it and
 * compiling cost more than the driver's own work.
 *
 * `build` gets a stand-in text for each named value and must pass it where the value goes
 * (`where('id', '=', slot.id)`); it must not branch on it. Kysely sends every value as a
 * parameter, so a stand-in is found among the parameters and replaced there.
 *
 * Outside a transaction it runs on the pool or the PGlite thread itself (`directQueryOf`).
 */
export function compiledOnce<K extends string, R>(
  names: readonly K[],
  build: (db: Kysely<any>, slot: Record<K, string>) => Compilable<R>,
): (db: Kysely<any>, values: Record<K, unknown>) => Promise<R[]> {
  const slot = Object.fromEntries(names.map((n) => [n, `\u0000slot:${n}`])) as Record<K, string>;
  let compiled: { sql: string; parameters: readonly unknown[]; at: Map<number, K> } | undefined;
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
      compiled = { sql: q.sql, parameters: q.parameters, at };
    }
    const { at } = compiled;
    const parameters = compiled.parameters.map((p, i) => {
      const name = at.get(i);
      return name === undefined ? p : values[name];
    });
    const direct = directQueryOf(db);
    if (direct) return (await direct(compiled.sql, parameters)) as R[];
    const { rows } = await db.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<R>);
    return rows;
  };
}
