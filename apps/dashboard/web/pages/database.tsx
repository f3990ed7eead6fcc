import { useEffect, useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { withPassword } from '../connection.js';
import { EnvEditor } from '../env-editor.js';
import { linkTo } from '../router.js';
import { Field, Masked, NoticeLine, Panel, useAction, useLoad } from '../ui.js';
import { Status } from './projects.js';

const ROUTERS = ['dbA', 'dbB', 'dbC', 'dbD', 'dbE'] as const;
export type Router = (typeof ROUTERS)[number];
const ENGINE: Record<Router, string> = { dbA: 'PostgreSQL', dbB: 'MariaDB', dbC: 'MySQL', dbD: 'MongoDB', dbE: 'libSQL' };
const ACTIONS = ['deploy', 'start', 'stop', 'reload'] as const;

type Database = {
  name: string; appName: string; applicationStatus: string; containerImage: string; databaseName: string | null; databaseUser: string | null;
  hasDatabasePassword: boolean; internalConnectionUrl: string; externalConnectionUrl: string | null; externalPort: number | null; env: string;
};

// The router is chosen at run time; inputs are checked by the API.
const get = (api: Api, router: Router, id: string) =>
  ok(api.GET(`/api/${router}.one` as '/api/dbA.one', { params: { query: { [`${router}Id`]: id } as { dbAId: string } } })) as Promise<Database>;
const post = (api: Api, router: Router, op: string, body: Record<string, unknown>) => ok(api.POST(`/api/${router}.${op}` as '/api/dbA.update', { body: body as never }));

/** The engine's router of a database service, and the service: the one router that knows the id. */
export async function findDatabase(api: Api, id: string): Promise<{ router: Router; db: Database }> {
  const answers = await Promise.allSettled(ROUTERS.map(async (router) => ({ router, db: await get(api, router, id) })));
  const hit = answers.find((a) => a.status === 'fulfilled');
  if (!hit) throw (answers[0] as PromiseRejectedResult).reason;
  return (hit as PromiseFulfilledResult<{ router: Router; db: Database }>).value;
}

/**
 * A database service (dbA..dbE). The project lists it without its engine: the page asks each
 * engine's router and keeps the one that knows the id.
 */
export function DatabasePage({ api, id }: { api: Api; id: string }) {
  const found = useLoad(() => findDatabase(api, id), [id]);
  return found.view(({ router }) => <Database_ api={api} router={router} id={id} />);
}

function Database_({ api, router, id }: { api: Api; router: Router; id: string }) {
  const db = useLoad(() => get(api, router, id), [router, id]);
  const action = useAction();
  const [password, setPassword] = useState('');
  const [applied, setApplied] = useState('');
  useEffect(() => {
    const onEvent = (e: Event) => (e as CustomEvent<{ workload: { id: string } | null }>).detail.workload?.id === id && db.reload();
    addEventListener('skiff:event', onEvent);
    return () => removeEventListener('skiff:event', onEvent);
  }, [id]);
  const act = (a: (typeof ACTIONS)[number]) => action.run(`${a}: queued`, async () => {
    await post(api, router, a, { [`${router}Id`]: id });
    db.reload();
  });
  const savePassword = (e: Event) => {
    e.preventDefault();
    void action.run('Password saved: the engine takes it on an empty data volume only (a new service, or after removing its volume)', async () => {
      await post(api, router, 'update', { [`${router}Id`]: id, databasePassword: password });
      setApplied(password);
      setPassword('');
    });
  };
  return db.view((d) => (
    <section>
      <h1 tabIndex={-1}>{d.name}</h1>
      <p><span class="muted">{ENGINE[router]} database · {d.appName} · {d.containerImage} · </span><Status value={d.applicationStatus} /></p>
      <div class="actions" role="group" aria-label="Actions">
        {ACTIONS.map((a) => <button type="button" key={a} onClick={() => void act(a)}>{a[0]!.toUpperCase() + a.slice(1)}</button>)}
      </div>
      <NoticeLine notice={action.notice} />
      <Panel title="Connection">
        <p class="hint">The API never returns the password: type it to fill it in the connection strings (it stays in this page, masked until shown, and is sent nowhere), or save it as the service's new password.</p>
        <dl class="facts">
          <dt>Database</dt><dd>{d.databaseName ?? '—'} <span class="muted">user {d.databaseUser ?? '—'}{d.hasDatabasePassword ? ', password set' : ''}</span></dd>
          <dt>Inside the platform</dt><dd>{applied ? <Masked label="internal connection string" value={withPassword(d.internalConnectionUrl, applied)} /> : <code>{d.internalConnectionUrl}</code>}</dd>
          <dt>From outside</dt><dd>{d.externalConnectionUrl
            ? (applied ? <Masked label="external connection string" value={withPassword(d.externalConnectionUrl, applied)} /> : <code>{d.externalConnectionUrl}</code>)
            : <span class="muted">not published</span>}</dd>
        </dl>
        <form class="inline" onSubmit={savePassword}>
          <Field label="Database password" type="password" value={password} onInput={setPassword} required />
          <button type="button" disabled={!password} onClick={() => setApplied(password)}>Fill in connection strings</button>
          <button type="submit">Save as new password</button>
        </form>
      </Panel>
      <EnvEditor key={id} initial={d.env ?? ''} save={(env) => post(api, router, 'saveEnvironment', { [`${router}Id`]: id, env })} />
      <p><a href={`/backups/database/${id}`} onClick={linkTo(`/backups/database/${encodeURIComponent(id)}`)}>Backups of this database</a></p>
    </section>
  ));
}
