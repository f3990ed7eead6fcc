import { useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { CHANNELS, type ChannelKind, FLAGS, type Values, blank, createOp, hasSecret, toBody, updateOp, valuesOf } from '../channels.js';
import { type Me, isAdmin } from '../me.js';
import { Check, Field, NoticeLine, Panel, Select, useAction, useLoad, when } from '../ui.js';

type Record_ = Record<string, unknown> & { notificationId: string; name: string; kind: ChannelKind };

// The operations are chosen by kind at run time; their bodies are checked by the API (BAD_REQUEST naming the field).
const post = (api: Api, path: string, body: Record<string, unknown>) => ok(api.POST(path as '/api/notification.createHook', { body: body as never }));

/** The organization's notification channels: created and edited per kind (secrets write-only), tested, and their recent deliveries. */
export function NotificationsPage({ api, me }: { api: Api; me: Me }) {
  const channels = useLoad(() => ok(api.GET('/api/notification.all')) as Promise<Record_[]>, []);
  const [editing, setEditing] = useState<Record_ | null>(null);
  const admin = isAdmin(me);
  const action = useAction();
  const remove = (n: Record_) => action.run(`${n.name} removed`, async () => {
    await ok(api.POST('/api/notification.remove', { body: { notificationId: n.notificationId } }));
    channels.reload();
  });
  return (
    <section>
      <h1 tabIndex={-1}>Notifications</h1>
      <Panel title="Channels">
        <NoticeLine notice={action.notice} />
        {channels.view((list) => list.length === 0 ? <p>No channel yet.</p> : (
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Events</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>
              {list.map((n) => (
                <tr key={n.notificationId}>
                  <td>{n.name}</td>
                  <td>{CHANNELS[n.kind].title}</td>
                  <td>{FLAGS.filter((f) => n[f.name] === true).map((f) => f.label).join(', ') || <span class="muted">none</span>}</td>
                  <td>{admin && (
                    <span class="actions">
                      <button type="button" onClick={() => setEditing(n)}>Edit<span class="sr-only"> {n.name}</span></button>
                      <button type="button" onClick={() => void remove(n)}>Remove<span class="sr-only"> {n.name}</span></button>
                    </span>
                  )}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      </Panel>
      {admin && (editing
        ? (
          <Panel title={`Edit ${editing.name}`}>
            <ChannelForm key={editing.notificationId} api={api} kind={editing.kind} record={editing} onDone={() => { setEditing(null); channels.reload(); }} />
          </Panel>
        )
        : <NewChannel api={api} onCreated={channels.reload} />)}
      {admin && <Deliveries api={api} />}
    </section>
  );
}

function NewChannel({ api, onCreated }: { api: Api; onCreated: () => void }) {
  const [kind, setKind] = useState<ChannelKind>('hook');
  return (
    <Panel title="New channel">
      <Select label="Channel kind" value={kind} onChange={(v) => setKind(v as ChannelKind)}
        options={(Object.keys(CHANNELS) as ChannelKind[]).map((k) => ({ value: k, label: CHANNELS[k].title }))} />
      <ChannelForm key={kind} api={api} kind={kind} onDone={onCreated} />
    </Panel>
  );
}

/** Create (no `record`) or edit one channel. A stored secret is never shown: left empty it is kept. */
function ChannelForm({ api, kind, record, onDone }: { api: Api; kind: ChannelKind; record?: Record_; onDone: () => void }) {
  const spec = CHANNELS[kind];
  const [values, setValues] = useState<Values>(() => (record ? valuesOf(record) : blank(kind)));
  const action = useAction();
  const set = (name: string) => (v: string | boolean) => setValues({ ...values, [name]: v });
  const flags = () => Object.fromEntries(['name', ...FLAGS.map((f) => f.name)].map((n) => [n, values[n]]));
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(record ? 'Channel saved' : 'Channel created', async () => {
      const body = { ...flags(), ...toBody(kind, values, { update: !!record }) };
      if (record) await post(api, updateOp(kind), { ...body, notificationId: record.notificationId, [spec.idField]: record[spec.idField] });
      else await post(api, createOp(kind), body);
      if (!record) setValues(blank(kind));
      onDone();
    });
  };
  const test = () => action.run('Test message sent', () => post(api, `/api/notification.${spec.test}`, toBody(kind, values, { update: false, only: (f) => !!f.tested })));
  const missingSecret = spec.fields.some((f) => f.type === 'secret' && !values[f.name]);
  return (
    <form class="inline" onSubmit={save} aria-label={record ? `Edit ${record.name}` : `New ${spec.title}`}>
      <Field label="Channel name" value={String(values.name)} onInput={set('name')} required />
      {spec.fields.map((f) => f.type === 'bool'
        ? <Check key={f.name} label={f.label} checked={values[f.name] === true} onChange={set(f.name)} />
        : <Field key={f.name} label={f.label} type={f.type === 'secret' ? 'password' : 'text'} value={String(values[f.name] ?? '')} onInput={set(f.name)}
            required={f.type === 'secret' ? !record : f.name !== 'messageThreadId'}
            placeholder={f.type === 'secret' && record ? (hasSecret(record, f.name) ? 'set: empty keeps it' : 'not set') : undefined} />)}
      <fieldset>
        <legend>Events</legend>
        {FLAGS.map((f) => <Check key={f.name} label={f.label} checked={values[f.name] === true} onChange={set(f.name)} />)}
      </fieldset>
      {spec.test && (
        <button type="button" disabled={missingSecret} onClick={() => void test()}>Test<span class="sr-only"> {spec.title}</span></button>
      )}
      {spec.test && missingSecret && record && <p class="hint">Stored secrets are never shown: type them again to test.</p>}
      <button type="submit">{record ? 'Save channel' : 'Create channel'}</button>
      {record && <button type="button" onClick={onDone}>Cancel</button>}
      <NoticeLine notice={action.notice} />
    </form>
  );
}

function Deliveries({ api }: { api: Api }) {
  const deliveries = useLoad(() => ok(api.GET('/api/notification.deliveries', { params: { query: { limit: 20 } } })), []);
  return (
    <Panel title="Recent deliveries">
      <button type="button" onClick={deliveries.reload}>Refresh deliveries</button>
      {deliveries.view(({ items }) => items.length === 0 ? <p>No delivery yet.</p> : (
        <table>
          <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">When</th><th scope="col">Last error</th></tr></thead>
          <tbody>
            {items.map((d) => (
              <tr key={d.deliveryId}>
                <td>{d.eventKind}</td>
                <td><span class={`status status-${d.status === 'delivered' ? 'done' : d.status === 'failed' ? 'error' : 'queued'}`}>{d.status}</span></td>
                <td>{d.attempts}</td>
                <td>{when(d.deliveredAt ?? d.createdAt)}</td>
                <td>{d.lastError ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </Panel>
  );
}
