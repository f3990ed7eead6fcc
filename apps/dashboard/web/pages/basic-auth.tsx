import { useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { Field, NoticeLine, Panel, useAction, useLoad } from '../ui.js';

type Entry = { securityId: string; username: string; createdAt: string };

/** Basic auth in front of an application: entries added (the password is write-only) and removed. */
export function BasicAuth({ api, applicationId }: { api: Api; applicationId: string }) {
  const entries = useLoad(async () => (await ok(api.GET('/api/security.all', { params: { query: { applicationId } } }))) as Entry[], [applicationId]);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const add = (e: Event) => {
    e.preventDefault();
    void action.run((c) => `${c.username} may now sign in`, async () => {
      const created = await ok(api.POST('/api/security.create', { body: { applicationId, username, password } }));
      setUsername('');
      setPassword('');
      entries.reload();
      return created;
    });
  };
  const remove = (entry: Entry) =>
    action.run(`${entry.username} removed`, async () => {
      await ok(api.POST('/api/security.delete', { body: { securityId: entry.securityId } }));
      entries.reload();
    });
  return (
    <Panel title="Basic auth">
      <p class="hint">Visitors of this application's domains sign in with one of these users. Passwords are stored hashed and never shown again.</p>
      {entries.view((list) => list.length > 0 && (
        <ul class="cards" aria-label="Basic auth users">
          {list.map((entry) => (
            <li key={entry.securityId}>
              {entry.username}{' '}
              <button type="button" onClick={() => void remove(entry)}>Remove<span class="sr-only"> user {entry.username}</span></button>
            </li>
          ))}
        </ul>
      ))}
      <form class="inline" onSubmit={add} aria-label="New basic auth user">
        <Field label="User name" value={username} onInput={setUsername} required autoComplete="off" error={action.fields.username} />
        <Field label="Password" type="password" value={password} onInput={setPassword} required autoComplete="new-password" error={action.fields.password} />
        <button type="submit">Add user</button>
        <NoticeLine notice={action.notice} />
      </form>
    </Panel>
  );
}
