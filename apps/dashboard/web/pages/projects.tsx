import { useEffect, useState } from 'preact/hooks';
import { type Api, messageOf, ok } from '../api.js';
import { linkTo, navigate } from '../router.js';
import { Field, useLoad } from '../ui.js';
import { NewCache, NewDatabase } from './new-service.js';

/** The organization's projects, and a form to create one (with its first environment). */
export function ProjectsPage({ api }: { api: Api }) {
  const projects = useLoad(() => ok(api.GET('/api/project.all')), []);
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  const create = async (e: Event) => {
    e.preventDefault();
    setError('');
    try {
      const created = await ok(api.POST('/api/project.create', { body: { name } }));
      setName('');
      projects.reload();
      navigate(`/projects/${encodeURIComponent(created.projectId)}`);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section>
      <h1 tabIndex={-1}>Projects</h1>
      {projects.view((list) =>
        list.length === 0 ? <p>No project yet.</p> : (
          <ul class="cards" aria-label="Projects">
            {list.map((p) => (
              <li key={p.projectId}>
                <a href={`/projects/${p.projectId}`} onClick={linkTo(`/projects/${encodeURIComponent(p.projectId)}`)}>{p.name}</a>
                <span class="muted"> {p.environments.length} environment{p.environments.length === 1 ? '' : 's'}, {p.environments.reduce((n, e) => n + e.services.length, 0)} workloads</span>
              </li>
            ))}
          </ul>
        ),
      )}
      <form onSubmit={create} class="inline">
        <h2>New project</h2>
        <Field label="Project name" value={name} onInput={setName} required />
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit">Create project</button>
      </form>
    </section>
  );
}

/** A project's environments with their workloads; creates environments, applications, databases and caches. */
export function ProjectPage({ api, projectId }: { api: Api; projectId: string }) {
  const project = useLoad(() => ok(api.GET('/api/project.one', { params: { query: { projectId } } })), [projectId]);
  const [envName, setEnvName] = useState('');
  const [error, setError] = useState('');
  const act = async (e: Event, work: () => Promise<unknown>) => {
    e.preventDefault();
    setError('');
    try {
      await work();
      project.reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return project.view((p) => (
    <section>
      <p><a href="/" onClick={linkTo('/')}>Projects</a> /</p>
      <h1 tabIndex={-1}>{p.name}</h1>
      {p.description && <p>{p.description}</p>}
      {error && <p role="alert" class="error">{error}</p>}
      {p.environments.map((env) => (
        <Environment key={env.environmentId} api={api} env={env} onCreated={project.reload} />
      ))}
      <form class="inline" onSubmit={(e) => act(e, async () => {
        await ok(api.POST('/api/environment.create', { body: { name: envName, projectId } }));
        setEnvName('');
      })}>
        <h2>New environment</h2>
        <Field label="Environment name" value={envName} onInput={setEnvName} required />
        <button type="submit">Create environment</button>
      </form>
    </section>
  ));
}

type Env = { environmentId: string; name: string; services: { id: string; type: string; name: string; appName: string; applicationStatus: string }[] };

function Environment({ api, env, onCreated }: { api: Api; env: Env; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  useEffect(() => setError(''), [env.environmentId]);
  const create = async (e: Event) => {
    e.preventDefault();
    try {
      await ok(api.POST('/api/application.create', { body: { name, environmentId: env.environmentId } }));
      setName('');
      onCreated();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <article class="panel" aria-labelledby={`env-${env.environmentId}`}>
      <h2 id={`env-${env.environmentId}`}>Environment {env.name}</h2>
      {env.services.length === 0 ? <p>No workload yet.</p> : (
        <table>
          <caption class="sr-only">Workloads of {env.name}</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Status</th></tr></thead>
          <tbody>
            {env.services.map((s) => {
              const to = `/workloads/${s.type}/${encodeURIComponent(s.id)}`;
              return (
                <tr key={s.id}>
                  <td><a href={to} onClick={linkTo(to)}>{s.name}</a></td>
                  <td>{s.type}</td>
                  <td><Status value={s.applicationStatus} /></td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <form class="inline" onSubmit={create}>
        <Field label={`New application in ${env.name}`} value={name} onInput={setName} required />
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit">Create application</button>
      </form>
      <NewDatabase api={api} environmentId={env.environmentId} envName={env.name} onCreated={onCreated} />
      <NewCache api={api} environmentId={env.environmentId} envName={env.name} onCreated={onCreated} />
    </article>
  );
}

export function Status({ value }: { value: string }) {
  return <span class={`status status-${value}`}>{value}</span>;
}
