import type { ComposeStack } from '@skiff/db';
import { wireServerId } from '@skiff/domain';
import { type BuildSource, type Command, CommandKind, type ComposeConversion, ComposeType, type ForbiddenHostPort, WorkloadKind, timestampFromDate } from '@skiff/proto';
import { TAKEN, recordDeployedHostPorts } from '../../../services/shared/published-ports.js';
import { BUILD_DEPLOY_DEADLINE_MS } from './deploy-application.js';
import { endDeployment } from './deployment-result.js';
import { type CommandResultContext, defineCommandKind, parseWorkloadKey, workloadKey } from './kind.js';

/** How long the agent has to fetch, pull or build and bring a stack up. */
export const DEPLOY_COMPOSE_DEADLINE_MS = BUILD_DEPLOY_DEADLINE_MS;

/** The stack records' `composeType` → the wire's; a type missing here cannot be deployed. */
export const COMPOSE_TYPES: Record<string, ComposeType> = {
  'container-compose': ComposeType.COMPOSE_TYPE_CONTAINER_COMPOSE,
  stack: ComposeType.COMPOSE_TYPE_STACK,
};

/** Where the agent takes the compose file from: the raw text, or a git source and the file's path in it. */
export type ComposeSource = { composeText: string; source?: undefined; composePath: '' } | { composeText: ''; source: BuildSource; composePath: string };

export interface DeployComposeInput {
  commandId: string;
  deploymentId: string;
  row: ComposeStack;
  composeType: ComposeType;
  source: ComposeSource;
  conversion: ComposeConversion;
  envFile: string;
  /** The stack's config files, opened: written beside the compose file. */
  configFiles: { filePath: string; content: string }[];
  command: string[];
  /** The stack may use host privileges (a remote server, or an organization trusted on the platform host). */
  allowHostPrivileges: boolean;
  /** Host ports the stack may not publish on its server, and why (published-ports.ts forbiddenHostPorts): the agent checks the file it fetched. */
  forbiddenHostPorts?: ReadonlyMap<string, string>;
  /** The most host ports the stack may publish (`SKIFF_MAX_COMPOSE_PORTS`). */
  maxHostPorts?: number;
  createdAt: Date;
  deadline: Date;
}

/** The DeployCompose command of one deployment of a stack (proto/skiff/agent/v1/command.proto). */
export function deployComposeCommand(input: DeployComposeInput): Command {
  const { row } = input;
  return {
    commandId: input.commandId,
    serverId: wireServerId(row.serverId),
    kind: CommandKind.COMMAND_KIND_DEPLOY_COMPOSE,
    workloadKey: workloadKey('compose', row.id),
    deadline: timestampFromDate(input.deadline),
    createdAt: timestampFromDate(input.createdAt),
    payload: {
      $case: 'deployCompose',
      value: {
        deploymentId: input.deploymentId,
        workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: row.id, appName: row.appName },
        composeType: input.composeType,
        composeText: input.source.composeText,
        source: input.source.source,
        composePath: input.source.composePath,
        conversion: input.conversion,
        envFile: input.envFile,
        configFiles: input.configFiles.map((f) => ({ path: f.filePath, content: f.content, target: '' })),
        command: input.command,
        allowHostPrivileges: input.allowHostPrivileges,
        forbiddenHostPorts: forbiddenRanges(input.forbiddenHostPorts ?? new Map()),
        maxHostPorts: input.maxHostPorts ?? 0,
      },
    },
  };
}

/**
 * `port/protocol` → why, as ranges of consecutive ports of one protocol and reason (a taken
 * port's reason empty), ordered by protocol and port: a stack publishing thousands of ports
 * (saved before the cap) stays a few bytes of every deploy's command.
 */
export function forbiddenRanges(forbidden: ReadonlyMap<string, string>): ForbiddenHostPort[] {
  const ports = [...forbidden].map(([hostPort, why]) => {
    const [port, protocol] = hostPort.split('/');
    return { port: Number(port), protocol: protocol ?? 'tcp', reason: why === TAKEN ? '' : why };
  });
  ports.sort((a, b) => (a.protocol === b.protocol ? a.port - b.port : a.protocol < b.protocol ? -1 : 1));
  const out: ForbiddenHostPort[] = [];
  for (const p of ports) {
    const last = out.at(-1);
    if (last && last.protocol === p.protocol && last.reason === p.reason && last.last + 1 === p.port) last.last = p.port;
    else out.push({ first: p.port, last: p.port, protocol: p.protocol, reason: p.reason });
  }
  return out;
}

/**
 * DeployCompose: its deployment follows the agent's events, as an application's does; the host
 * ports its file as deployed publishes, when the agent reports them, become the stack's.
 */
export const deployCompose = defineCommandKind({
  name: 'deploy compose',
  kinds: [CommandKind.COMMAND_KIND_DEPLOY_COMPOSE],
  workloads: ['compose'],
  deploys: true,
  build: deployComposeCommand,
  async applyResult(result: CommandResultContext) {
    // First: the ports' lock is taken before the stack's row (a save takes them in that order).
    const stack = parseWorkloadKey(result.command.workloadKey);
    if (result.publishedHostPorts && stack?.type === 'compose' && !(await newerDeployEnded(result))) {
      await recordDeployedHostPorts(result.tx, stack.id, result.publishedHostPorts.ranges, result.maxHostPorts);
    }
    await endDeployment(result);
  },
});

/** Whether a later deploy of the stack has ended already: what it published replaced this one's (a result that comes late). */
async function newerDeployEnded({ tx, command }: CommandResultContext): Promise<boolean> {
  const newer = await tx
    .selectFrom('commands')
    .select('id')
    .where('workloadKey', '=', command.workloadKey)
    .where('kind', '=', command.kind)
    .where('position', '>', String(command.position) as never)
    .where('status', 'in', ['done', 'failed'])
    .limit(1)
    .executeTakeFirst();
  return newer !== undefined;
}
