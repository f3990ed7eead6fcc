import { useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { type Me, isAdmin } from '../me.js';
import { Check, Field, Masked, NoticeLine, Panel, Select, useAction, useLoad, when } from '../ui.js';

const GRANTS: { name: string; label: string }[] = [
  { name: 'canCreateProjects', label: 'Create projects' },
  { name: 'canDeleteProjects', label: 'Delete projects' },
  { name: 'canCreateEnvironments', label: 'Create environments' },
  { name: 'canDeleteEnvironments', label: 'Delete environments' },
  { name: 'canCreateServices', label: 'Create services' },
  { name: 'canDeleteServices', label: 'Delete services' },
  { name: 'canAccessToContainer', label: 'Containers' },
  { name: 'canAccessToProxyFiles', label: 'Proxy files' },
  { name: 'canAccessToAPI', label: 'API keys' },
  { name: 'canAccessToSSHKeys', label: 'SSH keys' },
  { name: 'canAccessToGitProviders', label: 'Git providers' },
];

type Member = { userId: string; email: string; name: string; role: string; permissions: Record<string, unknown> & { accessedProjects: string[]; accessedServers: string[] } };

/** Members with their permissions, invitations (admins), and the caller's API keys. */
export function MembersPage({ api, me }: { api: Api; me: Me }) {
  return (
    <section>
      <h1 tabIndex={-1}>Members and API keys</h1>
      {isAdmin(me) && <Members api={api} />}
      {isAdmin(me) && <Invitations api={api} />}
      <ApiKeys api={api} />
    </section>
  );
}

function Members({ api }: { api: Api }) {
  const members = useLoad(() => ok(api.GET('/api/user.all')) as Promise<Member[]>, []);
  const projects = useLoad(() => ok(api.GET('/api/project.all')), []);
  const servers = useLoad(() => ok(api.GET('/api/server.all')).catch(() => []), []);
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <Panel title="Members">
      {members.view((list) => (
        <ul class="cards">
          {list.map((m) => (
            <li key={m.userId}>
              <strong>{m.name}</strong> <span class="muted">{m.email} · {m.role}</span>{' '}
              {m.role === 'member'
                ? <button type="button" aria-expanded={editing === m.userId} onClick={() => setEditing(editing === m.userId ? null : m.userId)}>Permissions<span class="sr-only"> of {m.name}</span></button>
                : <span class="muted">(every right)</span>}
              {editing === m.userId && (
                <PermissionsForm api={api} member={m} projects={projects.data ?? []} servers={servers.data ?? []} onSaved={members.reload} />
              )}
            </li>
          ))}
        </ul>
      ))}
    </Panel>
  );
}

/** A member's can* flags and the projects and servers they may reach (user.assignPermissions). */
function PermissionsForm({ api, member, projects, servers, onSaved }: {
  api: Api; member: Member; projects: { projectId: string; name: string }[]; servers: { serverId: string; name: string }[]; onSaved: () => void;
}) {
  const [grants, setGrants] = useState(() => Object.fromEntries(GRANTS.map((g) => [g.name, member.permissions[g.name] === true])));
  const [accessedProjects, setProjects] = useState(new Set(member.permissions.accessedProjects));
  const [accessedServers, setServers] = useState(new Set(member.permissions.accessedServers));
  const action = useAction();
  const toggle = (set: Set<string>, id: string, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(id);
    else next.delete(id);
    return next;
  };
  const save = (e: Event) => {
    e.preventDefault();
    void action.run('Permissions saved', async () => {
      await ok(api.POST('/api/user.assignPermissions', { body: { id: member.userId, ...grants, accessedProjects: [...accessedProjects], accessedServers: [...accessedServers] } }));
      onSaved();
    });
  };
  return (
    <form onSubmit={save} class="inline" aria-label={`Permissions of ${member.name}`}>
      <fieldset><legend>May</legend>
        {GRANTS.map((g) => <Check key={g.name} label={g.label} checked={grants[g.name] === true} onChange={(v) => setGrants({ ...grants, [g.name]: v })} />)}
      </fieldset>
      <fieldset><legend>Projects</legend>
        {projects.length === 0 ? <span class="muted">none</span> : projects.map((p) => (
          <Check key={p.projectId} label={p.name} checked={accessedProjects.has(p.projectId)} onChange={(v) => setProjects(toggle(accessedProjects, p.projectId, v))} />
        ))}
      </fieldset>
      <fieldset><legend>Servers</legend>
        {servers.length === 0 ? <span class="muted">none</span> : servers.map((s) => (
          <Check key={s.serverId} label={s.name} checked={accessedServers.has(s.serverId)} onChange={(v) => setServers(toggle(accessedServers, s.serverId, v))} />
        ))}
      </fieldset>
      <button type="submit">Save permissions</button>
      <NoticeLine notice={action.notice} />
    </form>
  );
}

/** Pending invitations: a new one's token is shown once; it can be emailed (user.sendInvitation) through an email channel or the operator's SMTP. */
function Invitations({ api }: { api: Api }) {
  const invitations = useLoad(() => ok(api.GET('/api/organization.allInvitations')), []);
  const channels = useLoad(() => ok(api.GET('/api/notification.all')), []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const [token, setToken] = useState<{ email: string; token: string } | null>(null);
  const [via, setVia] = useState('platform');
  const action = useAction();
  const invite = (e: Event) => {
    e.preventDefault();
    void action.run(`${email} invited`, async () => {
      const created = await ok(api.POST('/api/organization.inviteMember', { body: { email, role: role as 'member' } }));
      setToken({ email: created.email, token: created.token });
      setEmail('');
      invitations.reload();
    });
  };
  const emailChannels = (channels.data ?? []).filter((c) => c.kind === 'email');
  return (
    <Panel title="Invitations">
      <NoticeLine notice={action.notice} />
      {token && <p>Invitation token for {token.email} (shown once, valid seven days): <Masked label="invitation token" value={token.token} /></p>}
      {invitations.view((list) => {
        const pending = list.filter((i) => i.status === 'pending');
        return pending.length === 0 ? <p>No pending invitation.</p> : (
          <>
            <Select label="Send invitations through" value={via} onChange={setVia}
              options={[{ value: 'platform', label: "The operator's SMTP" }, ...emailChannels.map((c) => ({ value: c.notificationId, label: c.name }))]} />
            <table>
              <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>
                {pending.map((i) => (
                  <tr key={i.invitationId}>
                    <td>{i.email}</td><td>{i.role}</td><td>{when(i.expiresAt)}</td>
                    <td class="actions">
                      <button type="button" onClick={() => void action.run(`Invitation emailed to ${i.email}`, () => ok(api.POST('/api/user.sendInvitation', { body: { invitationId: i.invitationId, notificationId: via } })))}>Email<span class="sr-only"> {i.email}</span></button>
                      <button type="button" onClick={() => void action.run('Invitation cancelled', async () => {
                        await ok(api.POST('/api/organization.removeInvitation', { body: { invitationId: i.invitationId } }));
                        invitations.reload();
                      })}>Cancel<span class="sr-only"> invitation of {i.email}</span></button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        );
      })}
      <form class="inline" onSubmit={invite} aria-label="Invite a member">
        <Field label="Email to invite" value={email} onInput={setEmail} required />
        <Select label="Role" value={role} onChange={setRole} options={[{ value: 'member', label: 'Member' }, { value: 'admin', label: 'Admin' }]} />
        <button type="submit">Invite</button>
      </form>
    </Panel>
  );
}

/** The caller's API keys (admins: everyone's): the key itself only in the answer that created it, shown once here. */
function ApiKeys({ api }: { api: Api }) {
  const keys = useLoad(() => ok(api.GET('/api/user.apiKeys')), []);
  const [name, setName] = useState('');
  const [days, setDays] = useState('');
  const [readOnly, setReadOnly] = useState(false);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void action.run((k) => `Key ${k.name} created`, async () => {
      const expiresAt = days ? new Date(Date.now() + Number(days) * 86_400_000).toISOString() : undefined;
      const k = await ok(api.POST('/api/user.createApiKey', { body: { name, ...(expiresAt ? { expiresAt } : {}), ...(readOnly ? { scope: { readOnly: true } } : {}) } }));
      setCreated({ name: k.name, key: k.key });
      setName('');
      keys.reload();
      return k;
    });
  };
  return (
    <Panel title="API keys">
      <NoticeLine notice={action.notice} />
      {created && (
        <div class="once" role="status">
          <p>The key <strong>{created.name}</strong>, shown this once (it is stored only as a hash): <code class="key">{created.key}</code></p>
          <button type="button" onClick={() => setCreated(null)}>I have copied it</button>
        </div>
      )}
      {keys.view((list) => list.length === 0 ? <p>No API key.</p> : (
        <table>
          <thead><tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Scope</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Delete</span></th></tr></thead>
          <tbody>
            {list.map((k) => (
              <tr key={k.apiKeyId}>
                <td>{k.name}</td>
                <td><code>{k.start}…</code></td>
                <td>{k.scope ? [k.scope.readOnly && 'read-only', k.scope.projectIds && `${k.scope.projectIds.length} projects`, k.scope.serverIds && `${k.scope.serverIds.length} servers`].filter(Boolean).join(', ') : 'full'}</td>
                <td>{k.expiresAt ? when(k.expiresAt) : 'never'}</td>
                <td>{when(k.lastUsedAt)}</td>
                <td><button type="button" onClick={() => void action.run(`Key ${k.name} deleted`, async () => {
                  await ok(api.POST('/api/user.deleteApiKey', { body: { apiKeyId: k.apiKeyId } }));
                  keys.reload();
                })}>Delete<span class="sr-only"> key {k.name}</span></button></td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
      <form class="inline" onSubmit={create} aria-label="New API key">
        <Field label="Key name" value={name} onInput={setName} required />
        <Field label="Expires after (days, empty: never)" value={days} onInput={setDays} />
        <Check label="Read-only" checked={readOnly} onChange={setReadOnly} />
        <button type="submit">Create key</button>
      </form>
    </Panel>
  );
}
