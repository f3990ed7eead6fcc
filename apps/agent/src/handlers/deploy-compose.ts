/**
 * DeployCompose: fetches a compose stack's source, converts its file and runs it, then waits
 * until its services run. The stack's directory and what lives where: compose/stack-dir.ts.
 *
 * Steps, reported as deployment events (RUNNING first, DONE, ERROR or CANCELLED last):
 * 1. (phase `build`) the source fetched into `.incoming/` (compose/stack-source.ts): the raw
 *    text, or a git clone; the compose path checked to stay inside it;
 * 2. the file as fetched refused when it uses host privileges (libs/domain hostPrivileges:
 *    privileged, host namespaces, host paths, the Docker socket…) and the command does not
 *    allow them (`allow_host_privileges`, set by the control plane for remote servers and
 *    trusted organizations), or publishes a host port the command forbids (reserved, another
 *    workload's) or more than it allows (compose/host-ports.ts); the file as deployed (compose/deployed-file.ts): convertedCompose with the command's
 *    conversion, relative bind mounts moved to the kept `files/` (and filled from the source,
 *    compose/kept-files.ts), Skiff's labels on every service, a version for Swarm stacks;
 *    written with `.env` (0600) beside the compose file, then the new source swapped in as
 *    `code/`. A fetch or conversion that fails leaves the running stack and its files as they
 *    were; from here on the result, whatever it is, carries the host ports the file publishes
 *    (CommandResult.published_host_ports: the control plane keeps them as the stack's);
 *    A stack whose compose type changed since its last deploy is taken down first (its
 *    volumes and `files/` stay), so the two kinds never run side by side;
 * 3. the swarm, the platform network and (isolated stacks) the stack's own network, created
 *    when missing (attachable overlay networks: Compose's containers join them as external
 *    networks);
 * 4. the program, its output streamed to the deployment's log: `<compose> -p <appName> -f
 *    <file> --env-file .env up -d --build --remove-orphans`, or `docker stack deploy -c <file>
 *    --prune --with-registry-auth <appName>`, or the custom command (compose/deploy-args.ts);
 * 5. (phase `rollout`) until every service runs (compose/readiness.ts), within the deploy
 *    timeout and the command's deadline; a failure names the service and why.
 *
 * A cancel (or killBuild while in `build`) aborts the command's signal, which kills the
 * running program's process group; what Compose had already changed stays (there is no
 * previous version to go back to), and the deployment ends CANCELLED. Idempotent: run again
 * after an agent restart, it fetches, converts and runs the same stack again.
 */
import { PLATFORM_NETWORK, ComposeCommandError, ComposeError, describeHostPrivilege, hostPrivileges, refuseProjectName, type ComposeTypeName } from '@skiff/domain';
import { CommandKind, CommandStatus, ComposeType, DeploymentStatus, WorkloadKind, type Command, type DeployCompose, type PublishedHostPorts } from '@skiff/proto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { BuildLog } from '../build/build-log.js';
import { BuildError } from '../build/errors.js';
import { displayUrl } from '../build/git-source.js';
import { docker, runCompose, runStackDeploy, type ComposeSettings, type Files, type Run } from '../compose/cli.js';
import { deployArgs, servicesToWait, type DeployArgs } from '../compose/deploy-args.js';
import { deployedFile } from '../compose/deployed-file.js';
import { publishedHostPorts, refusedHostPort } from '../compose/host-ports.js';
import { readComposeDotenv } from '../compose/dotenv-values.js';
import { prepareKeptMounts } from '../compose/kept-files.js';
import { FileMountError, writeFileInto } from '../deployments/file-mounts.js';
import { projectContainers, readComposeRunning, readStackRunning } from '../compose/readiness.js';
import { stackServiceStates } from '../compose/stack-services.js';
import { CONVERTED_FILE, ENV_FILE, openDeployDirs, removeDeployWork, stackDirOf, swapInCode, type StackDir } from '../compose/stack-dir.js';
import { cleanComposePath, fetchStackSource } from '../compose/stack-source.js';
import { readStackState, writeStackState } from '../compose/stack-state.js';
import { takeDown } from '../compose/lifecycle.js';
import type { DockerDriver } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';
import { DeploymentEvents, checkDeployment, runDeployment } from '../deployments/deployment-events.js';
import { type Reports } from '../pipeline/reports.js';
import { AbandonedError } from '../abort/abandoned.js';
import { type CommandContext, type CommandHandler, type CommandOutcome } from '../pipeline/handler.js';
import type { CommandJournal } from '../pipeline/journal.js';
import type { TaskReading } from '../workloads/service-lifecycle.js';
import { waitForTasks } from '../workloads/workload-services.js';

export interface DeployComposeDeps {
  driver: DockerDriver;
  journal: CommandJournal;
  reports: Reports;
  /** How stacks run on this server; absent: DeployCompose commands fail saying so. */
  compose?: ComposeSettings;
  now?: () => Date;
  /** Between two looks at the services. Default 500 ms. */
  pollIntervalMs?: number;
  /** How long the services must keep running to count as started. Default 2 s. */
  settleMs?: number;
}

export const COMPOSE_TYPES: Partial<Record<ComposeType, ComposeTypeName>> = {
  [ComposeType.COMPOSE_TYPE_CONTAINER_COMPOSE]: 'container-compose',
  [ComposeType.COMPOSE_TYPE_STACK]: 'stack',
};

export function deployComposeHandler(deps: DeployComposeDeps): CommandHandler {
  const now = deps.now ?? (() => new Date());
  const eventsOf = (command: Command, deploy: DeployCompose) =>
    new DeploymentEvents(deps.journal, deps.reports, command.commandId, deploy.deploymentId, now);

  return {
    kind: CommandKind.COMMAND_KIND_DEPLOY_COMPOSE,
    payloadCase: 'deployCompose',
    takesSlot: true,

    validate(command) {
      const deploy = payloadOf(command);
      if (!deploy) return 'the command carries no DeployCompose';
      const missing = checkDeployment(deploy);
      if (missing) return missing;
      if (deploy.workload!.kind !== WorkloadKind.WORKLOAD_KIND_COMPOSE) return 'the workload of a DeployCompose must be of kind COMPOSE';
      if (!COMPOSE_TYPES[deploy.composeType]) return 'compose_type must be CONTAINER_COMPOSE or STACK';
      if (!deploy.source && deploy.composeText.trim() === '') return 'compose_text is empty and the command has no source';
      if (deploy.source && deploy.source.kind?.$case !== 'git') return 'a compose stack comes from raw text or a git source';
      if (cleanComposePath(deploy.composePath) === null) return 'compose_path must stay inside the source (no ..)';
      return null;
    },

    async run(context) {
      const deploy = payloadOf(context.command)!;
      const events = eventsOf(context.command, deploy);
      // Set once the new file is in place: from then on, whatever the outcome, its ports are the stack's.
      const placed: { ports?: PublishedHostPorts } = {};
      const outcome = await runDeployment(context, events, [BuildError, ComposeError, ComposeCommandError, DockerError], (fail) =>
        deploySteps(context, deploy, events, fail, placed),
      );
      return placed.ports ? { ...outcome, publishedHostPorts: placed.ports } : outcome;
    },

    async ended(command, outcome) {
      const deploy = payloadOf(command);
      if (!deploy) return;
      const cancelled = outcome.status === CommandStatus.COMMAND_STATUS_CANCELLED;
      await eventsOf(command, deploy).emit({
        status: cancelled ? DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED : DeploymentStatus.DEPLOYMENT_STATUS_ERROR,
        lines: [cancelled ? `Deployment cancelled: ${outcome.reason}` : `Deployment not run: ${outcome.reason}`],
        reason: outcome.reason,
      });
    },
  };

  async function deploySteps(
    context: CommandContext,
    deploy: DeployCompose,
    events: DeploymentEvents,
    fail: (reason: string) => Promise<CommandOutcome>,
    placed: { ports?: PublishedHostPorts },
  ): Promise<CommandOutcome> {
    const workload = deploy.workload!;
    const appName = workload.appName;
    const type = COMPOSE_TYPES[deploy.composeType]!;
    const settings = deps.compose;
    const program = settings?.program.program;
    await events.emit({
      status: DeploymentStatus.DEPLOYMENT_STATUS_RUNNING,
      lines: [
        ...(context.resumed ? ['The agent stopped during this deployment and runs it again'] : []),
        `Deploying compose stack ${appName} from ${sourceName(deploy)} as ${type === 'stack' ? 'a Swarm stack (docker stack deploy)' : `a Compose project (${program ? `${program.name} ${program.version}` : 'no Compose program'})`}`,
      ],
    });
    if (!settings) return fail('this agent is not set up to run compose stacks');
    const refusal = refuseProjectName(appName);
    if (refusal) return fail(refusal);
    if (type === 'container-compose' && !program) return fail(settings.program.missing!);
    const plan = deployArgs(type, deploy.command);
    if (plan.notes.length > 0) await events.log(...plan.notes.map((n) => `Note: ${n}`));

    const step: Step = {
      context,
      deploy,
      type,
      settings,
      events,
      dir: stackDirOf(settings.dataDir, appName),
      deadline: Math.min(context.deadline?.getTime() ?? Infinity, now().getTime() + settings.timeoutMs),
    };
    context.setPhase?.('build');
    const prepared = await prepareStack(step, plan);
    if ('failed' in prepared) return fail(prepared.failed);
    placed.ports = prepared.published;

    const swarm = await deps.driver.ensureSwarm();
    if (swarm.created) await events.log('Initialised a single-node swarm on this server');
    for (const network of [PLATFORM_NETWORK, ...(deploy.conversion?.isolated ? [appName] : [])]) {
      const made = await deps.driver.ensureNetwork(network);
      await events.log(made.created ? `Created network ${network}` : `Network ${network} is ready`);
    }
    if (context.signal.aborted) throw new AbandonedError();

    // Values this short are too common to hide in output lines (`true`, a port number).
    const secrets = [...prepared.variables.values()].filter((v) => v.length >= 8);
    const run: Run = { signal: context.signal, deadline: step.deadline, log: (...lines) => events.log(...lines), secrets };
    let known = new Set<string>();
    if (type === 'stack') {
      known = new Set((await stackServiceStates(deps.driver, workload.id)).flatMap((s) => s.tasks.map((t) => t.id)));
      await events.log(`Running docker stack ${plan.args.join(' ')} for stack ${appName}`);
      await runStackDeploy(settings, prepared.files, plan.args, prepared.variables, run);
    } else {
      await events.log(`Running ${program!.name} ${plan.args.join(' ')} for project ${appName}`);
      await runCompose(settings, prepared.files, plan.args, run);
    }
    context.setPhase?.('rollout');
    if (!plan.waits) {
      await events.emit({ status: DeploymentStatus.DEPLOYMENT_STATUS_DONE, lines: ['Deployment done'] });
      return { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };
    }
    const waited = await waitRunning(step, prepared.expected, known, run);
    if ('failed' in waited) return fail(waited.failed);
    await events.emit({ status: DeploymentStatus.DEPLOYMENT_STATUS_DONE, lines: [`Deployment done: ${waited.summary}`] });
    return { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };
  }

  /**
   * Steps 1 and 2: the source fetched, the file converted and written with its `.env`, the
   * kept files ready, the stack of the other compose type taken down, the source swapped in
   * and the stack's state written. What the deploy's work left is removed in any case.
   */
  async function prepareStack(
    step: Step,
    plan: DeployArgs,
  ): Promise<{ failed: string } | { files: Files; expected: string[]; variables: Map<string, string>; published: PublishedHostPorts }> {
    const { context, deploy, dir, events, settings, type } = step;
    const workload = deploy.workload!;
    await openDeployDirs(dir);
    try {
      const fetched = await fetchStackSource(deploy, dir, {
        signal: context.signal,
        deadline: step.deadline,
        log: (...lines) => events.log(...lines),
        deploymentId: deploy.deploymentId,
        dataDir: settings.dataDir,
      });
      const composeDir = posix.dirname(fetched.composePath);
      if (deploy.configFiles.length > 0) {
        const at = join(fetched.root, ...composeDir.split('/').filter((s) => s !== '.'));
        try {
          for (const file of deploy.configFiles) await writeFileInto(at, file);
        } catch (err) {
          if (err instanceof FileMountError) return { failed: `config files: ${err.message}` };
          throw err;
        }
        await events.log(`Wrote ${deploy.configFiles.length} config file(s) beside the compose file: ${deploy.configFiles.map((f) => f.path).join(', ')}`);
      }
      const text = await readFile(join(fetched.root, ...fetched.composePath.split('/')), 'utf8');
      // Checked on the file as fetched (a git source's too), before relative mounts become absolute.
      if (!deploy.allowHostPrivileges) {
        const found = hostPrivileges(text, { composePath: fetched.composePath });
        if (found.length > 0) return { failed: `${fetched.composePath}: ${describeHostPrivilege(found[0])}` };
      }
      const portRefusal = refusedHostPort(text, fetched.composePath, deploy);
      if (portRefusal) return { failed: portRefusal };
      const deployed = deployedFile({
        text,
        type,
        appName: workload.appName,
        id: workload.id,
        conversion: deploy.conversion,
        codeDir: dir.code,
        filesDir: dir.files,
        composePath: fetched.composePath,
      });
      const published = publishedHostPorts(text, deploy.envFile);
      const keptLines = await prepareKeptMounts(deployed.kept, fetched.root, dir.files);
      if (keptLines.length > 0) await events.log(...keptLines);
      await writeFile(join(fetched.root, composeDir, CONVERTED_FILE), deployed.text, { mode: 0o644 });
      const envPath = join(fetched.root, composeDir, ENV_FILE);
      await writeFile(envPath, deploy.envFile, { mode: 0o600 });
      await chmod(envPath, 0o600);
      if (context.signal.aborted) throw new AbandonedError();

      const previous = await readStackState(dir);
      if (previous && previous.type !== type) {
        await events.log(`The stack ran as ${previous.type} before: taking that down first (its volumes and files are kept)`);
        const down = await takeDown(
          context,
          { driver: deps.driver, now, pollIntervalMs: deps.pollIntervalMs },
          settings,
          workload,
          { dir, state: previous, type: previous.type },
          { signal: context.signal, deadline: step.deadline, log: (...lines) => events.log(...lines) },
          false,
        );
        if (down.status !== CommandStatus.COMMAND_STATUS_SUCCEEDED) return { failed: down.reason };
      }
      await swapInCode(dir);
      const file = posix.join('code', composeDir, CONVERTED_FILE);
      const envFile = posix.join('code', composeDir, ENV_FILE);
      await writeStackState(dir, { type, id: workload.id, project: workload.appName, file, envFile, deploymentId: deploy.deploymentId });
      await events.log(`Wrote ${file} (${deployed.services.length} services: ${deployed.services.map((s) => s.name).join(', ')}) and its .env`);
      const cwd = join(dir.code, composeDir);
      return {
        files: { project: workload.appName, file: join(dir.root, file), envFile: join(dir.root, envFile), cwd },
        expected: servicesToWait(deployed.services, plan),
        variables: readComposeDotenv(deploy.envFile),
        published,
      };
    } finally {
      await removeDeployWork(dir);
    }
  }

  /** Step 5: until every expected service runs, or the wait fails with the reason. */
  async function waitRunning(step: Step, expected: readonly string[], known: ReadonlySet<string>, run: Run): Promise<{ failed: string } | { summary: string }> {
    const { context, events, settings, type } = step;
    const { appName, id } = step.deploy.workload!;
    await events.log(`Waiting for ${expected.length > 0 ? expected.join(', ') : 'the stack'} to run (up to ${Math.max(0, Math.round((step.deadline - now().getTime()) / 1000))} s)`);
    let last = '';
    const look = async (): Promise<TaskReading> => {
      let reading: TaskReading;
      try {
        reading =
          type === 'stack'
            ? readStackRunning(expected.map((s) => `${appName}_${s}`), await stackServiceStates(deps.driver, id), known)
            : readComposeRunning(expected, await projectContainers(settings, appName, run));
      } catch (err) {
        if (err instanceof AbandonedError || err instanceof DockerError) throw err;
        reading = { phase: 'waiting', summary: `could not read the stack's state: ${(err as Error).message}` };
      }
      const summary = reading.phase === 'failed' ? reading.reason : reading.summary;
      if (summary !== last) {
        last = summary;
        await events.log(summary);
      }
      return reading;
    };
    const outcome = await waitForTasks(
      context,
      { now, pollIntervalMs: deps.pollIntervalMs, settleMs: deps.settleMs, waitTimeoutMs: Math.max(0, step.deadline - now().getTime()) },
      STACK_WAIT,
      look,
    );
    if (outcome.status === CommandStatus.COMMAND_STATUS_SUCCEEDED) return { summary: last };
    if (type === 'container-compose') await logFailingContainers(settings, appName, run, events);
    return { failed: outcome.reason };
  }
}

/** The stack's wait: its failure's reason, and the line logged when it runs. */
export const STACK_WAIT = { failure: 'the stack did not start', done: 'the stack is running' };

/** What the steps of one deploy share. */
interface Step {
  context: CommandContext;
  deploy: DeployCompose;
  type: ComposeTypeName;
  settings: ComposeSettings;
  events: DeploymentEvents;
  dir: StackDir;
  /** Epoch ms: the command's deadline, or the deploy timeout when sooner. */
  deadline: number;
}

/** The last lines of the project's containers that do not run, for the deployment's log. */
async function logFailingContainers(settings: ComposeSettings, project: string, run: Run, events: DeploymentEvents): Promise<void> {
  const limit = { signal: run.signal, deadline: Math.min(run.deadline, Date.now() + 10_000) };
  const log = new BuildLog((...lines) => events.log(...lines), { secrets: run.secrets });
  try {
    for (const c of await projectContainers(settings, project, limit)) {
      if (c.status === 'running' && !c.restarting) continue;
      const logs = await docker(settings, ['logs', '--tail', '10', c.id], limit);
      if (logs.lines.length === 0) continue;
      log.line(`Last lines of ${c.name}:`);
      for (const line of logs.lines) log.line(`  ${line}`);
    }
    await log.close();
  } catch (err) {
    if (err instanceof AbandonedError) throw err;
  }
}

/** Where the file comes from, as the log may show it (no credentials). */
function sourceName(deploy: DeployCompose): string {
  const kind = deploy.source?.kind;
  if (kind?.$case === 'git') return `${displayUrl(kind.value.url)} (branch ${kind.value.branch})`;
  return 'its raw compose file';
}

function payloadOf(command: Command): DeployCompose | null {
  return command.payload?.$case === 'deployCompose' ? command.payload.value : null;
}
