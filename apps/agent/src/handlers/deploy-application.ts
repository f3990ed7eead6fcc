/**
 * DeployApplication: rolls out one application (or cache instance: the same steps, never a
 * build) as a Swarm service and waits until the new version runs.
 *
 * Steps, each reported as a deployment event (RUNNING first, DONE or ERROR last; log lines
 * name images, services, networks and task states, never env values):
 * 1. the service spec from spec_json and the command's fields (deployments/deploy-spec.ts); a spec the
 *    domain refuses fails the deployment with its message;
 * 2. the swarm and the platform network exist (created when missing);
 * 3. with a `source` (git or an uploaded archive): the build (build/build-image.ts): fetch
 *    into `<agent data>/builds/<deploymentId>/`, build as `build` says, tag the result as
 *    `image` (the control plane names it `<appName>:<deploymentId>`), remove the work
 *    directory. It runs in phase `build` (a killBuild cancels it), within the build timeout
 *    and the command's deadline; an abort kills the builder at once. A failed build fails
 *    the deployment with the builder's reason. The image is local: no pull follows;
 * 3''. with `local_image` (a rollback), the image must be here: the deployment fails at once
 *    naming it when it is gone; it is never pulled;
 * 3'. without a source, the image is pulled first when the command carries registry credentials and the
 *    image is not here, or when it asks for `force_pull` (deployments/registry-pull.ts); a failed pull
 *    fails the deployment with the registry's reason (e.g. `unauthorized`);
 * 4. (phase `rollout`) createOrUpdateService (an update is a rolling `start-first` update with rollback), with
 *    the registry credentials, which the engine keeps for the service's later tasks;
 * 5. poll the service and its tasks until this deployment's tasks run (healthy, when the
 *    image or spec has a health check) and have run for the update monitor window, the old
 *    ones are shutting down and the engine's update completed (done: deployments/rollout.ts
 *    states the rule); one of them fails or the engine rolls back (error, with the task's
 *    error); or the wait's deadline passes: the command's deadline, and never more than
 *    `rolloutTimeoutMs`.
 *
 * After a built deploy, the workload's other built images are pruned but those the service
 * runs and returns to, and the command's `keep_images` (rollback targets).
 *
 * Idempotent: running it again for the same deployment writes the same spec (the engine
 * starts no new tasks when nothing changed) and finds the tasks already running. So an
 * agent that stopped in the middle of a deploy runs it again when it starts (see pipeline/runner.ts).
 * The image comes from the engine: each new task pulls it and falls back to a local copy,
 * so a redeploy picks up a newer image under the same tag. The registry password is never
 * logged.
 */
import { SwarmSpecError, type WorkloadSpecInput } from '@skiff/domain';
import { CommandKind, CommandStatus, DeploymentStatus, WorkloadKind, type Command, type DeployApplication } from '@skiff/proto';
import type { DockerDriver, ServiceInfo, ServiceSpec, TaskInfo } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';
import { DeploymentEvents, checkDeployment, runDeployment } from '../deployments/deployment-events.js';
import { type Reports } from '../pipeline/reports.js';
import { DEPLOYMENT_LABEL, DeploySpecError, deployServiceSpec, workloadSpecInput } from '../deployments/deploy-spec.js';
import { buildImage } from '../build/build-image.js';
import { pruneBuiltImages } from '../deployments/built-images.js';
import { BuildError } from '../build/errors.js';
import { displayUrl } from '../build/git-source.js';
import { DEFAULT_BUILD_TIMEOUT_MS, type BuildSettings } from '../build/settings.js';
import { removeStaleWorkDirs } from '../build/workdir.js';
import { AbandonedError, pause } from '../abort/abandoned.js';
import { type CommandContext, type CommandHandler, type CommandOutcome } from '../pipeline/handler.js';
import type { CommandJournal } from '../pipeline/journal.js';
import { pullIfNeeded, registryAuthOf } from '../deployments/registry-pull.js';
import { assessRollout, monitorWindowMs, rolloutTarget } from '../deployments/rollout.js';
import { undoRollout } from '../deployments/undo-rollout.js';
import { type ClusterImageDeps, shareBuiltImage } from '../deployments/cluster-image.js';
import { applicationFilesDir, FileMountError, writeFileMounts } from '../deployments/file-mounts.js';
import { claimVolumes } from '../deployments/volume-claims.js';

export interface DeployApplicationDeps {
  driver: DockerDriver;
  journal: CommandJournal;
  reports: Reports;
  now?: () => Date;
  /** Between two looks at the tasks. Default 100 ms (a rollout's done is seen this late at most). */
  pollIntervalMs?: number;
  /** Longest wait for the new version when the command allows more. Default 10 minutes. */
  rolloutTimeoutMs?: number;
  /** Longest image pull when the command allows more. Default 10 minutes. */
  pullTimeoutMs?: number;
  /**
   * How builds run (commands with a `source`). Absent: such commands fail, naming the
   * missing setting. When given, work directories an earlier agent process left are
   * removed as the handler is made (once, at agent start).
   */
  build?: BuildSettings;
  /**
   * The swarm's nodes and the registry they pull built images from (deployments/cluster-image.ts);
   * absent: built images are used where they were built.
   */
  cluster?: Omit<ClusterImageDeps, 'push'>;
}

export function deployApplicationHandler(deps: DeployApplicationDeps): CommandHandler {
  const now = deps.now ?? (() => new Date());
  const pollIntervalMs = deps.pollIntervalMs ?? 100;
  const rolloutTimeoutMs = deps.rolloutTimeoutMs ?? 10 * 60_000;
  if (deps.build) removeStaleWorkDirs(deps.build.dataDir);

  const eventsOf = (command: Command, deploy: DeployApplication) =>
    new DeploymentEvents(deps.journal, deps.reports, command.commandId, deploy.deploymentId, now);

  return {
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    payloadCase: 'deployApplication',
    takesSlot: true,

    validate(command) {
      const deploy = payloadOf(command);
      if (!deploy) return 'the command carries no DeployApplication';
      const missing = checkDeployment(deploy);
      if (missing) return missing;
      if (deploy.image === '') return 'image is empty';
      if (deploy.source && !deploy.build) return 'the command has a source but no build recipe';
      if (deploy.source && deploy.workload!.kind !== WorkloadKind.WORKLOAD_KIND_APPLICATION) return 'only applications are built from a source';
      return null;
    },

    async run(context) {
      const deploy = payloadOf(context.command)!;
      const events = eventsOf(context.command, deploy);
      return runDeployment(context, events, [DockerError, BuildError], (fail) => deploySteps(context, deploy, events, fail));
    },

    async ended(command, outcome) {
      const deploy = payloadOf(command);
      if (!deploy) return;
      if (outcome.status === CommandStatus.COMMAND_STATUS_CANCELLED) {
        // A cancelled run: the previous version keeps serving (deployments/undo-rollout.ts). A
        // command that never started (removed from the queue, cancelled while it waited)
        // changed nothing to undo, and ends without a call to the engine (its end answers a
        // control request that does not wait long).
        const started = deps.journal.get(command.commandId)?.state === 'started';
        const undone = started
          ? await undoRollout(deps.driver, { appName: deploy.workload!.appName, workloadId: deploy.workload!.id, deploymentId: deploy.deploymentId })
          : [];
        await eventsOf(command, deploy).emit({
          status: DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED,
          lines: [...undone, `Deployment cancelled: ${outcome.reason}`],
          reason: outcome.reason,
        });
        return;
      }
      await eventsOf(command, deploy).emit({
        status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR,
        lines: [`Deployment not run: ${outcome.reason}`],
        reason: outcome.reason,
      });
    },
  };

  async function deploySteps(
    context: CommandContext,
    deploy: DeployApplication,
    events: DeploymentEvents,
    fail: (reason: string) => Promise<CommandOutcome>,
  ): Promise<CommandOutcome> {
    const appName = deploy.workload!.appName;
    await events.emit({
      status: DeploymentStatus.DEPLOYMENT_STATUS_RUNNING,
      lines: [
        ...(context.resumed ? ['The agent stopped during this deployment and runs it again'] : []),
        deploy.source
          ? `Deploying ${sourceName(deploy)} as service ${appName} (built as image ${deploy.image})`
          : `Deploying image ${deploy.image} as service ${appName}`,
      ],
    });

    let spec: ServiceSpec;
    let input: WorkloadSpecInput;
    const filesDir = deps.build && deploy.files.length > 0 ? applicationFilesDir(deps.build.dataDir, deploy.workload!.id) : undefined;
    try {
      input = workloadSpecInput(deploy);
      spec = deployServiceSpec(deploy, filesDir);
    } catch (err) {
      if (err instanceof SwarmSpecError || err instanceof DeploySpecError || err instanceof FileMountError) return fail(err.message);
      throw err;
    }

    const swarm = await deps.driver.ensureSwarm();
    if (swarm.created) await events.log('Initialised a single-node swarm on this server');
    if (!input.detachPlatformNetwork) {
      const platform = input.platformNetwork;
      const network = await deps.driver.ensureNetwork(platform);
      await events.log(network.created ? `Created network ${platform}` : `Network ${platform} is ready`);
    }
    if (input.kind === 'application') {
      const refused = await claimVolumes(deps.driver, input);
      if (refused) return fail(refused);
      if (filesDir) {
        try {
          await writeFileMounts(filesDir, deploy.files);
        } catch (err) {
          if (err instanceof FileMountError) return fail(err.message);
          throw err;
        }
        await events.log(`Wrote ${deploy.files.length} mounted file(s)`);
      }
    }
    if (context.signal.aborted) throw new AbandonedError();

    let registryAuth = registryAuthOf(deploy);
    /** An image built here reaches the other nodes of the swarm through the server's registry. */
    const shareLocalImage = async () => {
      if (!deps.cluster) return;
      const shared = await shareBuiltImage({ ...deps.cluster, push: (source, target, options) => deps.driver.pushImage(source, target, options) }, spec, deploy.image, {
        signal: context.signal,
        timeoutMs: Math.max(1_000, Math.min(context.deadline?.getTime() ?? Infinity, now().getTime() + (deps.pullTimeoutMs ?? 10 * 60_000)) - now().getTime()),
      });
      spec = shared.spec;
      registryAuth = shared.registryAuth ?? registryAuth;
      if (shared.lines.length > 0) await events.log(...shared.lines);
    };
    if (deploy.source) {
      await build(context, deploy, events);
      await shareLocalImage();
    } else if (deploy.localImage) {
      // A rollback to an earlier deployment's built image: there is nothing to pull it from.
      if (!(await deps.driver.imageExists(deploy.image))) {
        return fail(`the image ${deploy.image} is no longer on this server (removed by a cleanup or prune): it cannot be rolled back to`);
      }
      await events.log(`Image ${deploy.image} is on this server: no build, no pull`);
      await shareLocalImage();
    } else {
      const pulled = await pullIfNeeded({
        driver: deps.driver,
        deploy,
        registryAuth,
        events,
        signal: context.signal,
        deadline: Math.min(context.deadline?.getTime() ?? Infinity, now().getTime() + (deps.pullTimeoutMs ?? 10 * 60_000)),
        now,
      });
      if (pulled.failed) return fail(pulled.failed);
    }
    if (context.signal.aborted) throw new AbandonedError();
    context.setPhase?.('rollout');

    const written = await deps.driver.createOrUpdateService(spec, registryAuth ? { registryAuth } : {});
    await events.log(
      written.created ? `Created service ${appName}` : `Updated service ${appName}`,
      ...written.warnings.map((w) => `Engine warning: ${w}`),
    );

    const waitUntil = Math.min(context.deadline?.getTime() ?? Infinity, now().getTime() + rolloutTimeoutMs);
    const target = rolloutTarget(spec);
    await events.log(
      `Waiting for the new version to run (${target.mode === 'replicated' ? `${target.replicas} replicas` : target.mode}, up to ${Math.max(0, Math.round((waitUntil - now().getTime()) / 1000))} s)`,
    );
    const outcome = await watchRollout(context, deploy.deploymentId, spec, target, waitUntil, events, fail);
    if (deploy.source && outcome.status === CommandStatus.COMMAND_STATUS_SUCCEEDED) {
      const service = await findService(spec).catch(() => null);
      await pruneBuiltImages(deps.driver, deploy.workload!.id, [deploy.image, service?.image, service?.previousImage, ...deploy.keepImages], context.log);
    }
    return outcome;
  }

  /** The build step; throws BuildError (the deployment fails with it) or AbandonedError. */
  async function build(context: CommandContext, deploy: DeployApplication, events: DeploymentEvents): Promise<void> {
    if (!deps.build) throw new BuildError('this agent is not set up to build (no build settings)');
    context.setPhase?.('build');
    const timeoutMs = deps.build.timeoutMs > 0 ? deps.build.timeoutMs : DEFAULT_BUILD_TIMEOUT_MS;
    const deadline = Math.min(context.deadline?.getTime() ?? Infinity, now().getTime() + timeoutMs);
    const workload = deploy.workload!;
    await buildImage({
      settings: deps.build,
      deploymentId: deploy.deploymentId,
      source: deploy.source!,
      recipe: deploy.build!,
      image: deploy.image,
      labels: {
        'skiff.managed': 'true',
        'skiff.kind': 'application',
        'skiff.id': workload.id,
        [DEPLOYMENT_LABEL]: deploy.deploymentId,
      },
      signal: context.signal,
      deadline,
      log: (...lines) => events.log(...lines),
    });
  }

  async function watchRollout(
    context: CommandContext,
    deploymentId: string,
    spec: ServiceSpec,
    target: ReturnType<typeof rolloutTarget>,
    waitUntil: number,
    events: DeploymentEvents,
    fail: (reason: string) => Promise<CommandOutcome>,
  ): Promise<CommandOutcome> {
    const seen = new Map<string, string>();
    const monitorMs = monitorWindowMs(spec);
    let summary = 'no look at the tasks yet';
    // The newest task transition: why a version that never runs waits (a taken port, a constraint).
    let lastTransition = '';
    for (;;) {
      if (context.signal.aborted) throw new AbandonedError();
      try {
        const service = await findService(spec);
        if (!service) return fail(`service ${spec.Name} disappeared during the deployment`);
        const tasks = await deps.driver.serviceTasks(spec.Name);
        const lines = taskTransitions(tasks, deploymentId, seen);
        if (lines.length > 0) {
          await events.log(...lines);
          lastTransition = lines.at(-1)!;
        }
        const assessment = assessRollout({ deploymentId, target, service, tasks, monitorMs, now: now() });
        if (assessment.phase === 'failed') return fail(assessment.reason);
        summary = assessment.summary;
        if (assessment.phase === 'done') {
          await events.emit({ status: DeploymentStatus.DEPLOYMENT_STATUS_DONE, lines: [`Deployment done: ${summary}`] });
          return { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };
        }
      } catch (err) {
        if (!(err instanceof DockerError)) throw err;
        // The engine may be briefly unreachable; the deadline below ends a longer outage.
        summary = `the engine did not answer: ${err.message}`;
        context.log.warn({ err: err.message }, 'could not look at the rollout');
      }
      if (now().getTime() >= waitUntil) {
        const reachedCommandDeadline = context.deadline !== null && waitUntil >= context.deadline.getTime();
        return fail(
          `the new version did not run before ${reachedCommandDeadline ? "the command's deadline" : 'the rollout timeout'} (${summary}${lastTransition ? `; last: ${lastTransition}` : ''})`,
        );
      }
      await pause(Math.min(pollIntervalMs, Math.max(0, waitUntil - now().getTime())), context.signal);
    }
  }

  async function findService(spec: ServiceSpec): Promise<ServiceInfo | null> {
    const list = await deps.driver.servicesByLabel({ 'skiff.managed': 'true', 'skiff.id': spec.Labels['skiff.id'] ?? '' });
    return list.find((s) => s.name === spec.Name) ?? null;
  }
}

/** Where the code comes from, as the log may show it (no credentials). */
function sourceName(deploy: DeployApplication): string {
  const kind = deploy.source?.kind;
  if (kind?.$case === 'git') return `${displayUrl(kind.value.url)} (branch ${kind.value.branch})`;
  if (kind?.$case === 'archive') return `the uploaded archive ${kind.value.archiveId}`;
  return 'the source';
}

function payloadOf(command: Command): DeployApplication | null {
  return command.payload?.$case === 'deployApplication' ? command.payload.value : null;
}

/** Log lines for this deployment's tasks that changed state since the last look. */
function taskTransitions(tasks: readonly TaskInfo[], deploymentId: string, seen: Map<string, string>): string[] {
  const lines: string[] = [];
  for (const task of [...tasks].reverse()) {
    if (task.labels[DEPLOYMENT_LABEL] !== deploymentId) continue;
    const key = `${task.state}/${task.error ?? ''}`;
    if (seen.get(task.id) === key) continue;
    seen.set(task.id, key);
    const name = task.slot !== null ? `Task ${task.slot}` : `Task ${task.id.slice(0, 12)}`;
    const detail = task.error ?? (task.message && task.message !== task.state ? task.message : '');
    lines.push(`${name}: ${task.state}${detail ? ` (${detail})` : ''}`);
  }
  return lines;
}
