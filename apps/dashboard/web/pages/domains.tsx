import { useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { type Cert, type DomainForm, blankDomain, domainBody } from '../service-forms.js';
import { Check, Field, NoticeLine, Panel, Select, useAction, useLoad } from '../ui.js';
import type { Domain } from '../workloads.js';

const CERTS: { value: Cert; label: string }[] = [
  { value: 'acme', label: "Let's Encrypt (automatic)" },
  { value: 'custom', label: 'Custom (a stored certificate)' },
  { value: 'none', label: 'None (the proxy’s own)' },
];

const httpsState = (d: Domain) => (d.https ? `HTTPS (${d.certificateType === 'acme' ? "Let's Encrypt" : d.certificateType})` : 'HTTP only');

/**
 * A workload's domains with their HTTPS state; an application's can be added (domain.create)
 * and removed (domain.delete). A refused field is said next to its input.
 */
export function Domains({ api, load, applicationId }: { api: Api; load: () => Promise<Domain[]>; applicationId?: string }) {
  const domains = useLoad(load, [applicationId]);
  const [form, setForm] = useState<DomainForm>(blankDomain);
  const action = useAction();
  const set = <K extends keyof DomainForm>(k: K) => (v: DomainForm[K]) => setForm({ ...form, [k]: v });
  const add = (e: Event) => {
    e.preventDefault();
    void action.run((d) => `Domain ${d.host} added`, async () => {
      const created = await ok(api.POST('/api/domain.create', { body: domainBody(applicationId!, form) }));
      setForm(blankDomain());
      domains.reload();
      return created;
    });
  };
  const remove = (d: Domain) =>
    action.run(`Domain ${d.host} removed`, async () => {
      await ok(api.POST('/api/domain.delete', { body: { domainId: d.domainId } }));
      domains.reload();
    });
  const err = action.fields;
  return (
    <Panel title="Domains">
      {domains.view((list) => list.length === 0 ? <p>No domain.</p> : (
        <ul aria-label="Domains" class="cards">
          {list.map((d) => (
            <li key={d.domainId}>
              {d.host}{d.path !== '/' ? d.path : ''}{' '}
              <span class={d.https ? 'status status-done' : 'status status-idle'}>{httpsState(d)}</span>
              {!d.enabled && <span class="muted"> (disabled)</span>}{' '}
              {applicationId && <button type="button" onClick={() => void remove(d)}>Remove<span class="sr-only"> {d.host}{d.path}</span></button>}
            </li>
          ))}
        </ul>
      ))}
      {applicationId && (
        <form class="inline" onSubmit={add} aria-label="New domain">
          <h3>New domain</h3>
          <Field label="Host" value={form.host} onInput={set('host')} required placeholder="shop.example.com" error={err.host} />
          <Field label="Path" value={form.path} onInput={set('path')} error={err.path} />
          <Field label="Container port" type="number" value={form.port} onInput={set('port')} error={err.port} />
          <Check label="HTTPS" checked={form.https} onChange={set('https')} />
          {form.https && <Select label="Certificate" value={form.certificateType} options={CERTS} onChange={(v) => set('certificateType')(v as Cert)} />}
          {(err.certificateType || err.https) && <p class="error">{err.certificateType ?? err.https}</p>}
          <button type="submit">Add domain</button>
          <NoticeLine notice={action.notice} />
        </form>
      )}
    </Panel>
  );
}
