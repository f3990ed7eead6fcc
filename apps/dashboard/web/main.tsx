import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type Api, apiFor, messageOf, ok } from './api.js';
import { LiveEvents } from './live-events.js';
import { ProjectPage, ProjectsPage } from './pages/projects.js';
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
      {error && <p role="alert" class="error">{error}</p>}
      <div class="layout">
        <main id="main">
          <Page path={path} api={api} apiKey={session.key} key={`${session.organizationId}${path}`} />
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

function Page({ path, api, apiKey }: { path: string; api: Api; apiKey: string }) {
  const project = /^\/projects\/([^/]+)$/.exec(path);
  if (project) return <ProjectPage api={api} projectId={decodeURIComponent(project[1]!)} />;
  const workload = /^\/workloads\/(application|compose|cache|database)\/([^/]+)$/.exec(path);
  if (workload) return <WorkloadPage api={api} apiKey={apiKey} kind={workload[1] as 'application'} id={decodeURIComponent(workload[2]!)} />;
  return <ProjectsPage api={api} />;
}

render(<App />, document.getElementById('app')!);
