import { wireServerId } from '@skiff/domain';
import { type ControlReply, ProxyOperation, type ProxyRequest } from '@skiff/proto';
import { z } from 'zod';
import { type AgentControl, agentResult, serverLabel } from '../../agents/outbound/control-client.js';
import { DomainError, Invalid } from '../../errors.js';

/** The API field each ProxyRequest field an agent may refuse comes from. */
const API_FIELDS: Record<string, string> = { content: 'proxyConfig', path: 'path', enable_dashboard: 'enableDashboard' };

/** How long an agent has to carry out a settings.*Proxy* request: a reload may bring the proxy container back first. */
export const PROXY_REQUEST_TIMEOUT_MS = 30_000;

/** The file of the shared middlewares in a proxy's configuration directory. */
export const MIDDLEWARES_FILE = 'middlewares.json';

/**
 * ProxyRequests (proto ProxyRequest) to the agent of a server, carried out at once through
 * the control channel (agents/outbound/control-client.ts). A refusal naming a request field is a
 * BAD_REQUEST naming the API field it came from; any other failure of the agent, a BAD_REQUEST
 * saying what it said, as other control requests answer agent trouble.
 */
export class ProxyRequests {
  constructor(private readonly agents: AgentControl) {}

  /** Sends the request to the server's agent (null: the platform host's) and answers its result, checked against `result`. */
  async send<T>(
    serverId: string | null,
    request: Pick<ProxyRequest, 'operation'> & Partial<ProxyRequest>,
    result: z.ZodType<T>,
  ): Promise<T> {
    const wire = wireServerId(serverId);
    const reply = await this.agents.request(wire, { request: { $case: 'proxy', value: { path: '', content: '', ...request } } });
    return proxyAnswer(wire, reply, result);
  }

  /** The names the shared middlewares of the server's proxy declare (the keys of middlewares.json). */
  async middlewareNames(serverId: string | null): Promise<Set<string>> {
    const text = await this.send(serverId, { operation: ProxyOperation.PROXY_OPERATION_READ_FILE, path: MIDDLEWARES_FILE }, z.string());
    let declared: unknown;
    try {
      declared = JSON.parse(text);
    } catch {
      throw agentTrouble(wireServerId(serverId), `keeps a ${MIDDLEWARES_FILE} that is not JSON`);
    }
    if (declared === null || typeof declared !== 'object' || Array.isArray(declared)) {
      throw agentTrouble(wireServerId(serverId), `keeps a ${MIDDLEWARES_FILE} that is not a JSON object`);
    }
    return new Set(Object.keys(declared));
  }
}

/** The result of an agent's reply to a ProxyRequest, or the error it stands for. */
export function proxyAnswer<T>(wire: string, reply: ControlReply, result: z.ZodType<T>): T {
  if (reply.error) {
    const field = API_FIELDS[reply.proxy?.refusedField ?? ''];
    if (field) throw Invalid(field, reply.error);
    throw agentTrouble(wire, `says ${reply.error}`);
  }
  if (!reply.proxy) throw agentTrouble(wire, 'gave no answer to a proxy request (is it older than the control plane?)');
  return agentResult(reply.proxy.resultJson, result, (what) => agentTrouble(wire, what));
}

function agentTrouble(wire: string, what: string): DomainError {
  return new DomainError('BAD_REQUEST', `The proxy of ${serverLabel(wire)} did not do it: its agent ${what}`);
}
