// The floor of tools/bench: a bare Hono server that answers project.one's query and makes
// project.create's rows on the same database as the control plane, with no authentication,
// validation, audit or logging: what the machine allows for the same work.
//   FLOOR_PORT; DATABASE_URL (PostgreSQL, a pool of 10 as the control plane's) or
//   FLOOR_PGLITE_DIR (the embedded database directory the control plane used: stop it first).
// GET  /one?projectId=…  the project with its environments and their services, one statement
// POST /create           a project and its `production` environment, one statement
import { randomBytes } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

type Query = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

const SERVICE_COLUMNS = 'id, name, app_name, description, application_status, server_id, created_at, environment_id';
const services = (table: string, type: string) =>
  `select ${SERVICE_COLUMNS}, '${type}' as type from ${table} where environment_id in (select id from environments where project_id = p.id)`;
const ONE = `select p.*,
  (select coalesce(json_agg(e order by e.created_at), '[]') from environments e where e.project_id = p.id) as environments,
  (select coalesce(json_agg(s order by s.created_at), '[]') from (${services('applications', 'application')}
    union all ${services('compose_stacks', 'compose')} union all ${services('cache_instances', 'cache')}) s) as services
  from projects p where p.id = $1`;
const CREATE = `with p as (insert into projects (id, organization_id, name, description, env) values ($1, $2, $3, null, '') returning *)
  insert into environments (id, project_id, name, description, env) select $4, p.id, 'production', null, '' from p returning *`;

async function connect(): Promise<{ query: Query; kind: string }> {
  if (process.env.DATABASE_URL) {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
    return { query: async (text, params) => (await pool.query(text, params)).rows, kind: 'postgres' };
  }
  const dir = process.env.FLOOR_PGLITE_DIR;
  if (!dir) throw new Error('bench-floor: set DATABASE_URL or FLOOR_PGLITE_DIR');
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'] });
  return { query: async (text, params) => (await db.query<Record<string, unknown>>(text, params)).rows, kind: 'pglite' };
}

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

const { query } = await connect();
const [org] = await query('select id from organizations order by created_at limit 1', []);
const app = new Hono();
app.get('/one', async (c) => {
  const [row] = await query(ONE, [c.req.query('projectId')]);
  return row ? c.json(row) : c.json({ code: 'NOT_FOUND' }, 404);
});
app.post('/create', async (c) => {
  const { name } = await c.req.json<{ name: string }>();
  const [environment] = await query(CREATE, [id('prj'), org!.id, name, id('env')]);
  return c.json(environment);
});
serve({ fetch: app.fetch, port: Number(process.env.FLOOR_PORT), hostname: '127.0.0.1' }, () => console.log('listening'));
