// The floor of tools/bench: a bare Hono server that answers project.one's query and makes
// project.create's rows on the same database as the control plane, with no authentication,
// validation, audit or logging: what the machine allows for the same work.
//   FLOOR_PORT; DATABASE_URL (PostgreSQL, a pool of 10 as the control plane's) or
//   FLOOR_PGLITE_DIR (the embedded database directory the control plane used: stop it first).
// GET  /one?projectId=…  the project with its environments, then their services: two statements
// POST /create           a project and its `production` environment, one statement
import { randomBytes } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

type Query = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

const SERVICE_COLUMNS = 'id, name, app_name, description, application_status, server_id, created_at, environment_id';
const PROJECT = `select p.*, e.id as e_id, e.name as e_name, e.description as e_description, e.env as e_env, e.created_at as e_created_at
  from projects p left join environments e on e.project_id = p.id where p.id = $1 order by e.created_at`;
const services = (table: string, type: string) =>
  `select ${SERVICE_COLUMNS}, '${type}' as type from ${table} where environment_id in (select id from environments where project_id = $1)`;
const SERVICES = [
  services('applications', 'application'),
  services('compose_stacks', 'compose'),
  services('cache_instances', 'cache'),
  services('database_services', 'database'),
].join(' union all ');
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
  const projectId = c.req.query('projectId');
  const rows = await query(PROJECT, [projectId]);
  if (rows.length === 0) return c.json({ code: 'NOT_FOUND' }, 404);
  return c.json({ ...rows[0], environments: rows, services: await query(SERVICES, [projectId]) });
});
app.post('/create', async (c) => {
  const { name } = await c.req.json<{ name: string }>();
  const [environment] = await query(CREATE, [id('prj'), org!.id, name, id('env')]);
  return c.json(environment);
});
serve({ fetch: app.fetch, port: Number(process.env.FLOOR_PORT), hostname: '127.0.0.1' }, () => console.log('listening'));
