import { useEffect } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { LineChart } from '../chart.js';
import { type Me, isAdmin, may } from '../me.js';
import { linkTo } from '../router.js';
import { NoticeLine, Panel, bytes, useAction, useLoad, when } from '../ui.js';
import { AddServer } from './add-server.js';
import { Status } from './projects.js';

/** The agent samples every 10 s (SKIFF_METRICS_INTERVAL_SECONDS): reading more often shows nothing new. */
const REFRESH_MS = 10_000;

/** Reloads `reload` every `ms` while the page is shown and the tab visible. */
export function useEvery(ms: number, reload: () => void) {
  useEffect(() => {
    const timer = setInterval(() => document.visibilityState === 'visible' && reload(), ms);
    return () => clearInterval(timer);
  }, [ms]);
}

const PLATFORM = 'platform';

/** The platform host and the organization's servers, with their online state; admins add servers. */
export function ServersPage({ api, me }: { api: Api; me: Me }) {
  const servers = useLoad(() => ok(api.GET('/api/server.all')), []);
  useEvery(REFRESH_MS * 3, servers.reload);
  return (
    <section>
      <h1 tabIndex={-1}>Servers</h1>
      <ul class="cards" aria-label="Servers">
        {(me.root || may(me, 'canAccessToContainer')) && (
          <li><a href={`/servers/${PLATFORM}`} onClick={linkTo(`/servers/${PLATFORM}`)}>Platform host</a> <span class="muted">where the control plane runs</span></li>
        )}
      </ul>
      {servers.view((list) => list.length === 0 ? <p>No remote server yet.</p> : (
        <table>
          <caption class="sr-only">Remote servers</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Address</th><th scope="col">State</th><th scope="col">Last seen</th><th scope="col">Agent</th></tr></thead>
          <tbody>
            {list.map((s) => (
              <tr key={s.serverId}>
                <td><a href={`/servers/${s.serverId}`} onClick={linkTo(`/servers/${encodeURIComponent(s.serverId)}`)}>{s.name}</a></td>
                <td>{s.address}</td>
                <td><Status value={s.status} /></td>
                <td>{when(s.lastSeenAt)}</td>
                <td>{s.agentVersion ?? ''}{s.dockerVersion ? <span class="muted"> · Docker {s.dockerVersion}</span> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
      {isAdmin(me) && <AddServer api={api} onAdded={servers.reload} />}
    </section>
  );
}

/** One server: its metrics charts, refreshed live, and its containers with restart. */
export function ServerPage({ api, me, serverId }: { api: Api; me: Me; serverId: string }) {
  const remote = serverId === PLATFORM ? undefined : serverId;
  const server = useLoad(() => (remote ? ok(api.GET('/api/server.one', { params: { query: { serverId: remote } } })) : Promise.resolve(null)), [serverId]);
  const title = server.data ? server.data.name : remote ? 'Server' : 'Platform host';
  return (
    <section>
      <p><a href="/servers" onClick={linkTo('/servers')}>Servers</a> /</p>
      <h1 tabIndex={-1}>{title}</h1>
      {server.view((s) => s && <p><Status value={s.status} /> <span class="muted">{s.address} · last seen </span>{when(s.lastSeenAt)}</p>)}
      {(remote ? isAdmin(me) : me.root) && <Metrics api={api} serverId={remote} />}
      {may(me, 'canAccessToContainer') && <Containers api={api} serverId={remote} />}
    </section>
  );
}

function Metrics({ api, serverId }: { api: Api; serverId?: string }) {
  const metrics = useLoad(() => ok(api.GET('/api/user.getServerMetrics', { params: { query: { serverId, dataPoints: '60' } } })), [serverId]);
  useEvery(REFRESH_MS, metrics.reload);
  const pct = (v: number) => `${v.toFixed(1)} %`;
  const rate = (v: number) => `${bytes(v)}/s`;
  return (
    <Panel title="Metrics">
      {metrics.view((m) => {
        const pick = (f: (p: (typeof m.points)[number]) => number) => m.points.map((p) => ({ at: p.at, value: f(p) }));
        const last = m.points[m.points.length - 1];
        return (
          <>
            <p class="muted">Last {m.points.length} samples, every 10 s; refreshed live.{last && <> Disk: {bytes(last.diskUsedBytes)} of {bytes(last.diskTotalBytes)}.</>}</p>
            <div class="charts">
              <LineChart title="CPU" format={pct} max={100} series={[{ label: 'CPU', points: pick((p) => p.cpuPercent) }]} />
              <LineChart title="Memory" format={pct} max={100} series={[{ label: 'Memory', points: pick((p) => p.memoryPercent) }]} />
              <LineChart title="Network" format={rate} series={[
                { label: 'Received', points: pick((p) => p.networkRxBytesPerSecond) },
                { label: 'Sent', points: pick((p) => p.networkTxBytesPerSecond) },
              ]} />
            </div>
            <p class="muted">Alert thresholds: CPU {m.thresholds.cpuPercent ?? 'off'}, memory {m.thresholds.memoryPercent ?? 'off'}.</p>
          </>
        );
      })}
    </Panel>
  );
}

function Containers({ api, serverId }: { api: Api; serverId?: string }) {
  const containers = useLoad(() => ok(api.GET('/api/container.getContainers', { params: { query: { serverId } } })), [serverId]);
  const action = useAction();
  const restart = (containerId: string, name: string) =>
    action.run(`${name}: restarted`, async () => {
      await ok(api.POST('/api/container.restartContainer', { body: { containerId, serverId } }));
      containers.reload();
    });
  return (
    <Panel title="Containers">
      <NoticeLine notice={action.notice} />
      {containers.view((list) => list.length === 0 ? <p>No container of your workloads here.</p> : (
        <table>
          <thead><tr><th scope="col">Name</th><th scope="col">Image</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {list.map((c) => (
              <tr key={c.containerId}>
                <td>{c.name}</td>
                <td>{c.image}</td>
                <td><Status value={c.state} /> <span class="muted">{c.status}</span></td>
                <td><button type="button" onClick={() => void restart(c.containerId, c.name)}>Restart<span class="sr-only"> {c.name}</span></button></td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </Panel>
  );
}
