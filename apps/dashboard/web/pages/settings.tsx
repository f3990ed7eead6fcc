import { useEffect, useId, useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { type Me, may } from '../me.js';
import { Check, NoticeLine, Panel, Select, useAction, useLoad, when } from '../ui.js';

/** updateProxyFile writes only these (libs/contracts settings/updateProxyFile). */
const WRITABLE = ['global.json', 'platform.json', 'middlewares.json'];

type Node = { name: string; path: string; type: 'file' | 'directory'; children?: Node[] };
const filesOf = (nodes: Node[]): Node[] => nodes.flatMap((n) => (n.type === 'file' ? [n] : filesOf(n.children ?? [])));

/**
 * What the caller may see of the platform: the host settings (platform administrators) and the
 * reverse proxy's files (canAccessToProxyFiles). A part the API would refuse is not shown.
 */
export function SettingsPage({ api, me }: { api: Api; me: Me }) {
  const version = useLoad(() => ok(api.GET('/api/settings.getPlatformVersion')), []);
  const proxy = may(me, 'canAccessToProxyFiles');
  return (
    <section>
      <h1 tabIndex={-1}>Settings</h1>
      {version.view((v) => <p class="muted">Skiff {v.version}</p>)}
      {me.root && <HostSettings api={api} />}
      {proxy && <ProxyFiles api={api} />}
      {!me.root && !proxy && <p>Nothing here is yours to change: ask an admin for the proxy files permission.</p>}
    </section>
  );
}

function HostSettings({ api }: { api: Api }) {
  const settings = useLoad(() => ok(api.GET('/api/settings.get')), []);
  const action = useAction();
  const setCleanup = (on: boolean) => action.run(`Daily cleanup ${on ? 'on' : 'off'}`, async () => {
    await ok(api.POST('/api/settings.updateContainerCleanup', { body: { enableContainerCleanup: on } }));
    settings.reload();
  });
  return (
    <Panel title="Platform host">
      {settings.view((s) => (
        <>
          <dl class="facts">
            <dt>Domain</dt><dd>{s.host ?? <span class="muted">none</span>}{s.host && ` (${s.https ? 'HTTPS' : 'HTTP'}, ${s.certificateType})`}</dd>
            <dt>Public IP</dt><dd>{s.publicIp ?? <span class="muted">not configured</span>}</dd>
            <dt>SSH key</dt><dd>{s.hasSSHPrivateKey ? <code>{s.sshKeyFingerprint}</code> : <span class="muted">none</span>}</dd>
            <dt>Changed</dt><dd>{when(s.updatedAt)}</dd>
          </dl>
          <Check label="Daily cleanup of unused images, stopped containers and build cache" checked={s.enableContainerCleanup} onChange={(v) => void setCleanup(v)} />
        </>
      ))}
      <NoticeLine notice={action.notice} />
    </Panel>
  );
}

/** The proxy's configuration directory of the platform host or a server; the three files it may write are editable. */
function ProxyFiles({ api }: { api: Api }) {
  const servers = useLoad(() => ok(api.GET('/api/server.all')).catch(() => []), []);
  const [serverId, setServerId] = useState('');
  const tree = useLoad(() => ok(api.GET('/api/settings.readDirectories', { params: { query: { serverId: serverId || undefined } } })) as Promise<Node[]>, [serverId]);
  const [path, setPath] = useState('');
  return (
    <Panel title="Proxy files">
      <Select label="Server" value={serverId} onChange={(v) => { setServerId(v); setPath(''); }}
        options={[{ value: '', label: 'Platform host' }, ...(servers.data ?? []).map((s) => ({ value: s.serverId, label: s.name }))]} />
      {tree.view((nodes) => (
        <ul class="files" aria-label="Proxy files">
          {filesOf(nodes).map((f) => (
            <li key={f.path}><button type="button" aria-pressed={path === f.path} onClick={() => setPath(f.path)}>{f.name}</button></li>
          ))}
        </ul>
      ))}
      {path && <ProxyFile key={`${serverId}${path}`} api={api} serverId={serverId || undefined} path={path} />}
    </Panel>
  );
}

function ProxyFile({ api, serverId, path }: { api: Api; serverId?: string; path: string }) {
  const file = useLoad(() => ok(api.GET('/api/settings.readProxyFile', { params: { query: { path, serverId } } })), [path, serverId]);
  const [text, setText] = useState('');
  useEffect(() => {
    if (file.data !== undefined) setText(file.data);
  }, [file.data]);
  const action = useAction();
  const id = useId();
  const writable = WRITABLE.includes(path.slice(path.lastIndexOf('/') + 1));
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(`${path} saved`, () => ok(api.POST('/api/settings.updateProxyFile', { body: { path, proxyConfig: text, serverId } })));
  };
  return file.view(() => (
    <form onSubmit={save}>
      <label for={id}>{path}{writable ? '' : ' (read only)'}</label>
      <textarea id={id} class="code" rows={14} value={text} readOnly={!writable} spellcheck={false} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      {writable && <button type="submit">Save {path}</button>}
      <NoticeLine notice={action.notice} />
    </form>
  ));
}
