import type { ForgeEvent } from './payloads.js';
import { firstWatchedFile, watchPathProblem } from './watch-paths.js';

/** A workload's push-to-deploy settings. */
export interface DeploySettings {
  /** null counts as on (the default of new workloads). */
  autoDeploy: boolean | null;
  /** The branch (or, with triggerType tag, any tag) that deploys; null: any branch. */
  branch: string | null;
  triggerType: 'push' | 'tag';
  watchPaths: readonly string[] | null;
}

export type Decision = { deploy: true; reason: string } | { deploy: false; reason: string };

const ignored = (reason: string): Decision => ({ deploy: false, reason: `ignored: ${reason}` });

/** Whether a push (or tag) event deploys a workload, and why, in words a person reads. */
export function decidePush(settings: DeploySettings, e: ForgeEvent): Decision {
  if (e.kind === 'ping') return ignored('ping event (the hook works)');
  if (e.kind !== 'push' && e.kind !== 'tag') {
    if (e.kind === 'other' && e.ref === null && e.event === 'push') {
      // The generic route with no branch in the body (a registry's notice, a bare call).
      if (settings.autoDeploy === false) return ignored('auto-deploy is off');
      return { deploy: true, reason: 'deployed: webhook called' };
    }
    return ignored(`event ${e.event} does not deploy`);
  }
  if (settings.autoDeploy === false) return ignored('auto-deploy is off');
  if (e.deleted) return ignored(`${e.kind === 'tag' ? 'tag' : 'branch'} ${e.ref ?? ''} was deleted`);
  if (settings.triggerType === 'tag') {
    if (e.kind !== 'tag') return ignored(`push to branch ${e.ref ?? '?'}: this workload deploys on tags`);
  } else {
    if (e.kind === 'tag') return ignored(`tag ${e.ref ?? '?'}: this workload deploys on pushes to ${settings.branch ?? 'a branch'}`);
    if (settings.branch && e.ref !== settings.branch) return ignored(`branch ${e.ref ?? '?'} is not ${settings.branch}`);
  }
  const what = e.kind === 'tag' ? `tag ${e.ref}` : `push to ${e.ref}`;
  const watch = settings.watchPaths?.filter((p) => p.trim() !== '') ?? [];
  if (watch.length === 0) return { deploy: true, reason: `deployed: ${what}` };
  if (e.changedFiles === null) return ignored(`the forge did not list changed files, and watch paths are set (${watch.join(', ')})`);
  const hit = firstWatchedFile(watch, e.changedFiles);
  if (!hit) {
    const unusable = watch.map(watchPathProblem).filter((p) => p !== null);
    const note = unusable.length > 0 ? `; unusable: ${[...new Set(unusable)].join(', ')}` : '';
    return ignored(`no changed file matches the watch paths (${watch.join(', ')})${note}`);
  }
  return { deploy: true, reason: `deployed: ${what} changed ${hit}` };
}
