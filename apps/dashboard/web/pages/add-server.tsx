import { useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { Field, NoticeLine, Panel, useAction } from '../ui.js';

type Join = { name: string; command: string; expiresAt: string };

/**
 * Adds a server (server.create): the answer carries, once, the command that starts the agent
 * with a one-time join token. It is shown until "I have copied it", and never kept.
 */
export function AddServer({ api, onAdded }: { api: Api; onAdded: () => void }) {
  const [name, setName] = useState('');
  const [address, setAddress] = useState('');
  const [join, setJoin] = useState<Join | null>(null);
  const [copied, setCopied] = useState('');
  const action = useAction();
  const add = (e: Event) => {
    e.preventDefault();
    void action.run((s) => `Server ${s.name} added: pending until its agent joins`, async () => {
      const created = await ok(api.POST('/api/server.create', { body: { name: name.trim(), address: address.trim() } }));
      setJoin({ name: created.name, command: created.join.command, expiresAt: created.join.expiresAt });
      setCopied('');
      setName('');
      setAddress('');
      onAdded();
      return created;
    });
  };
  const copy = async (command: string) => {
    try {
      await navigator.clipboard.writeText(command);
      setCopied('Copied to the clipboard');
    } catch {
      setCopied('The browser refused the clipboard: select the command and copy it');
    }
  };
  return (
    <Panel title="Add a server">
      {join ? (
        <div class="once" role="status">
          <p>Run this on <strong>{join.name}</strong> (shown this once; its token works once, until {new Date(join.expiresAt).toLocaleString()}):</p>
          <pre class="key" aria-label="Join command"><code>{join.command}</code></pre>
          <div class="actions">
            <button type="button" onClick={() => void copy(join.command)}>Copy the command</button>
            <button type="button" onClick={() => setJoin(null)}>I have copied it</button>
          </div>
          {copied && <p>{copied}</p>}
        </div>
      ) : (
        <form class="inline" onSubmit={add} aria-label="Add a server">
          <Field label="Server name" value={name} onInput={setName} required error={action.fields.name} />
          <Field label="Address" value={address} onInput={setAddress} required placeholder="203.0.113.10 or host name" error={action.fields.address} />
          <button type="submit">Add server</button>
        </form>
      )}
      <NoticeLine notice={action.notice} />
    </Panel>
  );
}
