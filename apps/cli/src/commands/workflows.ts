import { flagOn, onlyFlags, stringFlag } from '../args.js';
import type { Client } from '../client.js';
import { refused, usage } from '../errors.js';
import { paint, statusStyle, table } from '../output.js';
import type { Session } from '../session.js';
import { allWorkloads, findWorkload, op, projectTrees } from '../workloads.js';

interface Deployment {
  deploymentId: string;
  status: 'queued' | 'running' | 'done' | 'error' | 'cancelled';
  reason: string | null;
}

const ENDED = new Set(['done', 'error', 'cancelled']);

/** Prints a deployment's log as it is written, until the deployment ends; answers how it ended. */
export async function followDeployment(s: Session, client: Client, deploymentId: string): Promise<Deployment> {
  const write = (text: string) => (s.json ? s.io.err(text) : s.io.out(text));
  for (;;) {
    for await (const event of client.stream('/api/logs.deployment', { deploymentId, follow: true })) {
      if (event.event === 'line') write(`${(JSON.parse(event.data) as { text: string }).text}\n`);
    }
    const state = await client.call<Deployment>(op('deployment.readLogs'), { deploymentId });
    if (ENDED.has(state.status)) return state;
    // The stream ended before the deployment did (a restart of the control plane, say): read on.
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** `skiff deploy <application>`: queues a deploy (a redeploy when it has run before) and follows its log. */
export async function deploy(s: Session): Promise<void> {
  onlyFlags(s.args, ['json', 'help', 'context', 'title', 'no-follow'], 'deploy');
  const [ref, ...extra] = s.args.positionals;
  if (!ref || extra.length) throw usage('usage: skiff deploy <application name or id> [--title text] [--no-follow]');
  const client = s.client();
  const app = await findWorkload(client, ref, ['application']);
  const title = stringFlag(s.args, 'title');
  const earlier = await client.call<unknown[]>(op('deployment.all'), { applicationId: app.id });
  const operation = earlier.length ? 'application.redeploy' : 'application.deploy';
  const queued = await client.call<Deployment>(op(operation), { applicationId: app.id, ...(title ? { title } : {}) });
  s.io.err(`${paint(s.io, 'bold', operation === 'application.deploy' ? 'Deploying' : 'Redeploying')} ${app.name} (${app.id}): deployment ${queued.deploymentId}\n`);
  if (flagOn(s.args, 'no-follow')) {
    if (s.json) s.io.out(`${JSON.stringify(queued)}\n`);
    return;
  }
  const ended = await followDeployment(s, client, queued.deploymentId);
  if (s.json) s.io.out(`${JSON.stringify(ended)}\n`);
  else s.io.err(`Deployment ${ended.deploymentId}: ${paint(s.io, statusStyle(ended.status), ended.status)}${ended.reason ? ` (${ended.reason})` : ''}\n`);
  if (ended.status !== 'done') throw refused(`deployment ${ended.deploymentId} ended ${ended.status}${ended.reason ? `: ${ended.reason}` : ''}`);
}

/** `skiff logs <workload> [-f] [--tail N] [--since T] [--service name]`: a service's runtime log. */
export async function logs(s: Session): Promise<void> {
  onlyFlags(s.args, ['json', 'help', 'context', 'follow', 'tail', 'since', 'service'], 'logs');
  const [ref, ...extra] = s.args.positionals;
  if (!ref || extra.length) throw usage('usage: skiff logs <workload> [-f] [--tail N] [--since time] [--service name]');
  const tail = stringFlag(s.args, 'tail');
  if (tail !== undefined && !/^\d{1,5}$/.test(tail)) throw usage('tail: a whole number of lines');
  const client = s.client();
  const w = await findWorkload(client, ref, ['application', 'compose', 'cache']);
  const service = stringFlag(s.args, 'service');
  if (service && w.type !== 'compose') throw usage('service: only for a compose stack');
  const idField = { application: 'applicationId', compose: 'composeId', cache: 'cacheId', database: '' }[w.type];
  const query = { [idField]: w.id, ...(service ? { serviceName: service } : {}), ...(tail ? { tail } : {}), since: stringFlag(s.args, 'since'), follow: flagOn(s.args, 'follow') };
  const ac = new AbortController();
  const stop = () => ac.abort();
  process.once('SIGINT', stop);
  try {
    for await (const event of client.stream('/api/logs.service', query, ac.signal)) {
      const data = JSON.parse(event.data) as { stream?: string; text?: string; reason?: string };
      if (event.event === 'line') s.io.out(s.json ? `${event.data}\n` : `${data.text}\n`);
      else if (event.event === 'end' && data.reason && !s.json) s.io.err(`${paint(s.io, 'dim', `-- ${data.reason}`)}\n`);
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    process.removeListener('SIGINT', stop);
  }
}

/** `skiff status [project]`: every workload with its state. */
export async function status(s: Session): Promise<void> {
  onlyFlags(s.args, ['json', 'help', 'context'], 'status');
  const [project, ...extra] = s.args.positionals;
  if (extra.length) throw usage('usage: skiff status [project name or id]');
  const client = s.client();
  let rows = await allWorkloads(client);
  if (project) {
    const trees = await projectTrees(client);
    const found = trees.filter((p) => p.projectId === project || p.name === project);
    if (!found.length) throw refused(`no project named or numbered "${project}"`);
    rows = rows.filter((w) => found.some((p) => p.projectId === w.projectId));
  }
  if (s.json) {
    s.io.out(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  s.io.out(
    table(
      s.io,
      rows.map((w) => ({ project: w.project, environment: w.environment, type: w.type, name: w.name, id: w.id, status: w.applicationStatus, server: w.serverId ?? 'local' })),
      ['project', 'environment', 'type', 'name', 'id', 'status', 'server'],
    ),
  );
}
