import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Api, apiFor, messageOf, ok } from './api.js';
import { LiveEvents } from './live-events.js';
import { type Me, isAdmin, loadMe, may } from './me.js';
import { BackupsPage } from './pages/backups.js';
import { MembersPage } from './pages/members.js';
import { NotificationsPage } from './pages/notifications.js';
import { ProjectPage, ProjectsPage } from './pages/projects.js';
import { ServerPage, ServersPage } from './pages/servers.js';
import { SettingsPage } from './pages/settings.js';
import { SignIn } from './pages/sign-in.js';
import { WorkloadPage } from './pages/workload.js';
import { linkTo, navigate, usePath } from './router.js';
import { type Session, loadSession, saveSession } from './session.js';
import './style.css';

type Organization = { organizationId: string; name: string; role: string };

function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const update = (s: Session | null) => {
    saveSession(s);
    setSession(s);
  };
  if (!session) return <SignIn onSignedIn={update} />;
  return <Shell session={session} onChange={update} />;
}

function Shell({ session, onChange }: { session: Session; onChange: (s: Session | null) => void }) {
  const api = apiFor(session.key);
  const path = usePath();
  const [orgs, setOrgs] = useState<Organization[]>([]);
  const [error, setError] = useState('');
  const [me, setMe] = useState<Me | null>(null);
  useEffect(() => {
    setMe(null);
    loadMe(api).then(setMe, (e) => setError(messageOf(e)));
  }, [session.key]);

  const loadOrgs = () => ok(apiFor(session.signedIn.key).GET('/api/organization.all')).then(setOrgs, (e) => setError(messageOf(e)));
  useEffect(() => void loadOrgs(), [session.signedIn.key]);

  const switchTo = async (organizationId: string) => {
    setError('');
    try {
      onChange(await switchOrganization(session, organizationId));
      // The page shown belongs to the organization left: start from its projects.
      navigate('/');
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const signOut = async () => {
    // Keys minted for other organizations are removed; the key typed at sign-in stays the user's.
    const owner = apiFor(session.signedIn.key);
    await Promise.allSettled(Object.values(session.minted).map((m) => owner.POST('/api/user.deleteApiKey', { body: { apiKeyId: m.apiKeyId } })));
    onChange(null);
  };

  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="bar">
        <a href="/" onClick={linkTo('/')} class="brand">Skiff</a>
        <label class="org">
          Organization
          <select value={session.organizationId} onFocus={() => void loadOrgs()} onChange={(e) => void switchTo((e.target as HTMLSelectElement).value)}>
            {orgs.length === 0 && <option value={session.organizationId}>{session.organizationId}</option>}
            {orgs.map((o) => (
              <option value={o.organizationId} key={o.organizationId}>{o.name}</option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => void signOut()}>Sign out</button>
      </header>
      {me && <Nav me={me} path={path} />}
      {error && <p role="alert" class="error">{error}</p>}
      <div class="layout">
        <main id="main">
          {me ? <Page path={path} api={api} apiKey={session.key} me={me} key={`${session.organizationId}${path}`} /> : <p aria-busy="true">Loading…</p>}
        </main>
        <LiveEvents apiKey={session.key} key={session.key} />
      </div>
    </>
  );
}

/**
 * A key acts in one organization (docs/security.md). Switching mints a key for the other one
 * with the key typed at sign-in (`user.createApiKey` with `metadata.organizationId`), expiring
 * in 12 hours, kept for this tab only and deleted at sign-out.
 */
async function switchOrganization(session: Session, organizationId: string): Promise<Session> {
  if (organizationId === session.signedIn.organizationId) return { ...session, ...session.signedIn };
  const minted = session.minted[organizationId];
  if (minted) return { ...session, key: minted.key, organizationId };
  const created = await ok(
    apiFor(session.signedIn.key).POST('/api/user.createApiKey', {
      body: { name: 'dashboard session', metadata: { organizationId }, expiresAt: new Date(Date.now() + 12 * 3600_000).toISOString() },
    }),
  );
  return { ...session, key: created.key, organizationId, minted: { ...session.minted, [organizationId]: { key: created.key, apiKeyId: created.apiKeyId } } };
}

/** The sections the caller may use: a link the API would only refuse is not shown. */
function Nav({ me, path }: { me: Me; path: string }) {
  const links = [
    { to: '/', label: 'Projects', shown: true },
    { to: '/servers', label: 'Servers', shown: true },
    { to: '/backups', label: 'Backups', shown: isAdmin(me) },
    { to: '/notifications', label: 'Notifications', shown: true },
    { to: '/members', label: 'Members', shown: true },
    { to: '/settings', label: 'Settings', shown: me.root || may(me, 'canAccessToProxyFiles') },
  ];
  const current = (to: string) => (to === '/' ? path === '/' || path.startsWith('/projects') || path.startsWith('/workloads') : path.startsWith(to));
  return (
    <nav class="nav" aria-label="Sections">
      {links.filter((l) => l.shown).map((l) => (
        <a key={l.to} href={l.to} onClick={linkTo(l.to)} aria-current={current(l.to) ? 'page' : undefined}>{l.label}</a>
      ))}
    </nav>
  );
}

function Page({ path, api, apiKey, me }: { path: string; api: Api; apiKey: string; me: Me }) {
  const server = /^\/servers\/([^/]+)$/.exec(path);
  if (server) return <ServerPage api={api} me={me} serverId={decodeURIComponent(server[1]!)} />;
  if (path === '/servers') return <ServersPage api={api} me={me} />;
  const backups = /^\/backups(?:\/database\/([^/]+))?$/.exec(path);
  if (backups) return <BackupsPage api={api} me={me} database={backups[1] && decodeURIComponent(backups[1])} />;
  if (path === '/notifications') return <NotificationsPage api={api} me={me} />;
  if (path === '/members') return <MembersPage api={api} me={me} />;
  if (path === '/settings') return <SettingsPage api={api} me={me} />;
  const project = /^\/projects\/([^/]+)$/.exec(path);
  if (project) return <ProjectPage api={api} projectId={decodeURIComponent(project[1]!)} />;
  const workload = /^\/workloads\/(application|compose|cache|database)\/([^/]+)$/.exec(path);
  if (workload) return <WorkloadPage api={api} apiKey={apiKey} kind={workload[1] as 'application'} id={decodeURIComponent(workload[2]!)} />;
  return <ProjectsPage api={api} />;
}

render(<App />, document.getElementById('app')!);
