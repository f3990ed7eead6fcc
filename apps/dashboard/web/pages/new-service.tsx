import { useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { type DatabaseForm, ENGINES, type Engine, blankDatabase, databaseBody } from '../service-forms.js';
import { Field, NoticeLine, Select, useAction } from '../ui.js';

// The engine is chosen at run time; the API checks the body.
const createDatabase = (api: Api, engine: Engine, body: Record<string, string>) =>
  ok(api.POST(`/api/${engine}.create` as '/api/dbA.create', { body: body as { name: string; environmentId: string } }));

/** Creates a database service (one router per engine, dbA..dbE) in an environment. */
export function NewDatabase({ api, environmentId, envName, onCreated }: { api: Api; environmentId: string; envName: string; onCreated: () => void }) {
  const [form, setForm] = useState<DatabaseForm>(blankDatabase);
  const action = useAction();
  const set = <K extends keyof DatabaseForm>(k: K) => (v: DatabaseForm[K]) => setForm({ ...form, [k]: v });
  const engine = ENGINES.find((e) => e.router === form.engine)!;
  const create = (e: Event) => {
    e.preventDefault();
    void action.run((d) => `Database ${d.name} created${form.databasePassword ? '' : ' with a generated password'}`, async () => {
      const created = await createDatabase(api, form.engine, databaseBody(environmentId, form));
      setForm(blankDatabase());
      onCreated();
      return created;
    });
  };
  const err = action.fields;
  return (
    <form class="inline" onSubmit={create} aria-label={`New database in ${envName}`}>
      <h3>New database</h3>
      <Select label="Engine" value={form.engine} onChange={(v) => setForm({ ...form, engine: v as Engine })}
        options={ENGINES.map((e) => ({ value: e.router, label: e.label }))} />
      <Field label="Database service name" value={form.name} onInput={set('name')} required error={err.name} />
      <Field label="Image" value={form.containerImage} onInput={set('containerImage')} placeholder={engine.image} hint={`Empty: ${engine.image}`} error={err.containerImage} />
      {form.engine !== 'dbE' && <Field label="Database name" value={form.databaseName} onInput={set('databaseName')} placeholder="app" error={err.databaseName} />}
      {form.engine !== 'dbE' && <Field label="Database user" value={form.databaseUser} onInput={set('databaseUser')} placeholder="app" error={err.databaseUser} />}
      <Field label="Database password" type="password" value={form.databasePassword} onInput={set('databasePassword')} autoComplete="new-password"
        hint="Empty: the platform generates one, stored encrypted and never shown" error={err.databasePassword} />
      <button type="submit">Create database</button>
      <NoticeLine notice={action.notice} />
    </form>
  );
}

/** Creates a cache (Redis) instance in an environment; its password is required and write-only. */
export function NewCache({ api, environmentId, envName, onCreated }: { api: Api; environmentId: string; envName: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [containerImage, setImage] = useState('');
  const [databasePassword, setPassword] = useState('');
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void action.run((c) => `Cache ${c.name} created`, async () => {
      const created = await ok(api.POST('/api/cache.create', { body: { name: name.trim(), environmentId, databasePassword, ...(containerImage.trim() ? { containerImage: containerImage.trim() } : {}) } }));
      setName('');
      setImage('');
      setPassword('');
      onCreated();
      return created;
    });
  };
  const err = action.fields;
  return (
    <form class="inline" onSubmit={create} aria-label={`New cache in ${envName}`}>
      <h3>New cache (Redis)</h3>
      <Field label="Cache name" value={name} onInput={setName} required error={err.name} />
      <Field label="Cache image" value={containerImage} onInput={setImage} placeholder="redis:8" hint="Empty: redis:8" error={err.containerImage} />
      <Field label="Cache password" type="password" value={databasePassword} onInput={setPassword} required autoComplete="new-password" hint="Stored encrypted, never shown again" error={err.databasePassword} />
      <button type="submit">Create cache</button>
      <NoticeLine notice={action.notice} />
    </form>
  );
}
