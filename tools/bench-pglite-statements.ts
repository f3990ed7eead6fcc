/**
 * Where a PGlite statement's time goes (issue 15): project.one's first statement, by primary key,
 * on an in-process PGlite with Skiff's schema (its migrations), run the ways PGlite allows, in µs
 * of CPU a call (BENCH_PGLITE_CALLS, 3000, in 7 rounds taking the ways in turn; the median round):
 *   query       `db.query(text, params)`: the extended protocol with the unnamed statement, so
 *               parse, analysis and plan each call, and six calls into the WebAssembly
 *   exec        `db.exec` of the statement with the value as a literal (simple protocol, one call)
 *   execute     `db.exec` of `EXECUTE p('…')`, the statement prepared once with PREPARE (EXECUTE
 *               takes no protocol parameters: the value is a literal again)
 *   prepared    a named statement parsed once; each call one Bind/Execute/Sync through `execProtocol`
 *   prepared, own rows   the same, the rows made with the columns' parsers looked up once
 *   unnamed, one message   parsed and planned each call (the unnamed statement) but in one
 *               Parse/Bind/Describe/Execute/Sync message, own rows: its difference to the line
 *               above is the parse, analysis and plan
 *   wire only   the prepared path without parsing the answer into rows (PGlite's `parseResults`)
 *   wire, no fs sync     and without PGlite's `syncToFs` after it
 * and `parseResults` alone on the prepared path's messages.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite, parse, protocol } from '@electric-sql/pglite';
import { migrateToLatest, openDatabase } from '../libs/db/src/database.js';

const CALLS = Number(process.env.BENCH_PGLITE_CALLS ?? 3000);
const ROUNDS = 7;
const PROJECT = `select p.*, e.id as e_id, e.name as e_name, e.description as e_description, e.env as e_env, e.created_at as e_created_at
  from projects p left join environments e on e.project_id = p.id where p.id = $1 order by e.created_at`;

const dir = await mkdtemp(join(tmpdir(), 'skiff-pglite-statements-'));
try {
  const h = await openDatabase({ pgliteDir: dir });
  await migrateToLatest(h.db);
  await h.close();

  const db = await PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] });
  await db.exec(`insert into users (id, email, name) values ('usr_1', 'a@example.com', 'a');
    insert into organizations (id, name, owner_id) values ('org_1', 'org', 'usr_1');
    insert into projects (id, organization_id, name, env) values ('prj_1', 'org_1', 'bench', '');
    insert into environments (id, project_id, name, env) values ('env_1', 'prj_1', 'production', '')`);
  const ser = protocol.serialize;
  await db.exec(`prepare p(text) as ${PROJECT.replace('$1', '$1::text')}`);
  const described = (await db.execProtocol(new Uint8Array([...ser.parse({ name: 'q', text: PROJECT }), ...ser.describe({ type: 'S', name: 'q' }), ...ser.sync()]))).messages;
  const rowDescription = described.filter((m) => m.name === 'rowDescription');
  const bindExecute = (id: string) => {
    const parts = [ser.bind({ statement: 'q', values: [id] }), ser.execute({}), ser.sync()];
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) (out.set(p, at), (at += p.length));
    return out;
  };
  // The columns' parsers looked up once, as a statement prepared once can: parseResults copies
  // every parser (hundreds, with the array types) into a new object each call.
  const columns = (rowDescription[0] as unknown as { fields: { name: string; dataTypeID: number }[] }).fields.map((f) => {
    const parser = db.parsers[f.dataTypeID];
    return { name: f.name, parse: parser ? (x: string) => parser(x, f.dataTypeID) : (x: string) => x };
  });
  const rowsOf = (messages: typeof described) => {
    const rows: Record<string, unknown>[] = [];
    for (const m of messages) {
      if (m.name !== 'dataRow') continue;
      const row: Record<string, unknown> = {};
      (m as unknown as { fields: (string | null)[] }).fields.forEach((x, i) => (row[columns[i]!.name] = x === null ? null : columns[i]!.parse(x)));
      rows.push(row);
    }
    return { rows };
  };
  const unnamed = (id: string) => {
    const parts = [ser.parse({ text: PROJECT }), ser.bind({ values: [id] }), ser.describe({ type: 'P' }), ser.execute({}), ser.sync()];
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) (out.set(p, at), (at += p.length));
    return out;
  };
  let lastMessages: typeof described = [];
  const ways: [string, () => Promise<unknown>][] = [
    ['query', () => db.query(PROJECT, ['prj_1'])],
    ['exec', () => db.exec(PROJECT.replace('$1', `'prj_1'`))],
    ['execute', () => db.exec(`execute p('prj_1')`)],
    ['prepared', async () => {
      const { messages } = await db.execProtocol(bindExecute('prj_1'));
      return parse.parseResults([...rowDescription, ...messages], db.parsers)[0];
    }],
    ['prepared, own rows', async () => {
      const { messages } = await db.execProtocol(bindExecute('prj_1'));
      return rowsOf(messages);
    }],
    ['unnamed, one message', async () => rowsOf((await db.execProtocol(unnamed('prj_1'))).messages)],
    ['wire only', async () => (lastMessages = (await db.execProtocol(bindExecute('prj_1'))).messages)],
    ['wire, no fs sync', async () => (await db.execProtocol(bindExecute('prj_1'), { syncToFs: false })).messages],
  ];
  const sample = JSON.stringify((await db.query(PROJECT, ['prj_1'])).rows);
  const preparedRows = JSON.stringify(((await ways[3]![1]()) as { rows: unknown[] }).rows);
  const ownRows = JSON.stringify(rowsOf((await db.execProtocol(bindExecute('prj_1'))).messages).rows);
  if (sample !== preparedRows || sample !== ownRows) throw new Error(`the prepared path answers differently:\n${sample}\n${preparedRows}`);
  // CPU time of this process (the machine is shared: wall time counts others' work), in rounds that
  // take the ways in turn; the median round of each.
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return user + system;
  };
  const perRound = Math.max(1, Math.floor(CALLS / ROUNDS));
  const rounds = new Map<string, number[]>();
  for (const [, run] of ways) for (let i = 0; i < perRound; i++) await run();
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, run] of ways) {
      const started = cpu();
      for (let i = 0; i < perRound; i++) await run();
      rounds.set(name, [...(rounds.get(name) ?? []), (cpu() - started) / perRound]);
    }
    const started = cpu();
    for (let i = 0; i < perRound; i++) parse.parseResults([...rowDescription, ...lastMessages], db.parsers);
    rounds.set('parseResults alone', [...(rounds.get('parseResults alone') ?? []), (cpu() - started) / perRound]);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const table = [...rounds].map(([name, xs]) => [name, median(xs)] as const);
  console.log(`PGlite, node ${process.version}, ${CALLS} calls each, project.one's first statement, CPU time (median of ${ROUNDS} rounds)`);
  for (const [name, us] of table) console.log(`${name.padEnd(20)} ${us.toFixed(1).padStart(8)} µs a call`);
  await db.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
