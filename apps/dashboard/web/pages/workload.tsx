import { useEffect, useState } from 'preact/hooks';
import { type Api, messageOf } from '../api.js';
import { EnvEditor } from '../env-editor.js';
import { DeploymentLog } from '../deployment-log.js';
import { type Action, type Deployment, type Kind, workloadOps } from '../workloads.js';
import { useLoad } from '../ui.js';
import { DatabasePage } from './database.js';
import { BasicAuth } from './basic-auth.js';
import { Domains } from './domains.js';
import { Status } from './projects.js';
import { VolumeBackup } from './volume-backup.js';

const ACTIONS: Action[] = ['deploy', 'redeploy', 'stop', 'start'];

/** One workload: status and actions, deployment history with the chosen log live, env, domains; an application's basic auth and volume backups. */
export function WorkloadPage({ api, apiKey, kind, id }: { api: Api; apiKey: string; kind: Kind; id: string }) {
  const ops = workloadOps(api, kind, id);
  // Database services (dbA..dbE) have a router per engine: their own page.
  if (!ops) return <DatabasePage api={api} id={id} />;
  const workload = useLoad(() => ops.one(), [kind, id]);
  const deployments = useLoad(() => ops.deployments?.() ?? Promise.resolve([] as Deployment[]), [kind, id]);
  const [shown, setShown] = useState<string | null>(null);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);

  // An event of this workload (a deploy that ended, a crash loop) refreshes what it changes.
  useEffect(() => {
    const onEvent = (e: Event) => {
      if ((e as CustomEvent<{ workload: { id: string } | null }>).detail.workload?.id !== id) return;
      workload.reload();
      deployments.reload();
    };
    addEventListener('skiff:event', onEvent);
    return () => removeEventListener('skiff:event', onEvent);
  }, [id]);

  const act = async (action: Action) => {
    setMessage(null);
    try {
      const answer = (await ops.act(action)) as { deploymentId?: string };
      setMessage({ text: `${action}: queued`, error: false });
      workload.reload();
      deployments.reload();
      if (answer?.deploymentId) setShown(answer.deploymentId);
    } catch (err) {
      setMessage({ text: `${action}: ${messageOf(err)}`, error: true });
    }
  };

  return workload.view((w) => (
    <section>
      <h1 tabIndex={-1}>{w.name}</h1>
      <p>
        <span class="muted">{kind} · {w.appName} · </span>
        <Status value={w.applicationStatus} />
      </p>
      <div class="actions" role="group" aria-label="Actions">
        {ACTIONS.map((a) => (
          <button type="button" key={a} onClick={() => void act(a)}>{a[0]!.toUpperCase() + a.slice(1)}</button>
        ))}
      </div>
      {message && <p role={message.error ? 'alert' : 'status'} class={message.error ? 'error' : ''}>{message.text}</p>}

      {ops.deployments && (
        <article class="panel" aria-labelledby="deployments-title">
          <h2 id="deployments-title">Deployments</h2>
          {deployments.view((list) => list.length === 0 ? <p>No deployment yet.</p> : (
            <table>
              <thead><tr><th scope="col">Started</th><th scope="col">Title</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Log</span></th></tr></thead>
              <tbody>
                {list.map((d) => (
                  <tr key={d.deploymentId}>
                    <td><time dateTime={d.createdAt}>{new Date(d.createdAt).toLocaleString()}</time></td>
                    <td>{d.title ?? ''}{d.reason ? <span class="muted"> — {d.reason}</span> : null}</td>
                    <td><Status value={d.status} /></td>
                    <td><button type="button" aria-pressed={shown === d.deploymentId} onClick={() => setShown(d.deploymentId)}>Log</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
          {shown && <DeploymentLog key={shown} apiKey={apiKey} deploymentId={shown} />}
        </article>
      )}

      <EnvEditor key={`${kind}${id}`} initial={w.env ?? ''} save={ops.saveEnv} />

      {ops.domains && <Domains api={api} load={ops.domains} applicationId={kind === 'application' ? id : undefined} />}
      {kind === 'application' && <BasicAuth api={api} applicationId={id} />}
      {kind === 'application' && <VolumeBackup api={api} applicationId={id} />}
    </section>
  ));
}
