import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/** A remote server registered with the platform, where services may run once its agent joins. */
export const ServerRecord = z.object({
  serverId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  address: z.string().describe('IPv4 or IPv6 address, or host name'),
  description: z.string().nullable(),
  status: z
    .enum(['pending', 'online', 'offline'])
    .describe(
      "'pending' until the server's agent joins with its join token; then 'online' while the agent " +
        'was heard from within the last three heartbeat intervals, else \'offline\'',
    ),
  lastSeenAt: Timestamp.nullable().describe('When the agent last registered, sent a heartbeat or a report'),
  joinedAt: Timestamp.nullable().describe('When the agent last joined with a join token'),
  agentVersion: z.string().nullable().describe('Version of the agent program, as it registered'),
  dockerVersion: z.string().nullable().describe("The Docker Engine's version, as the agent registered"),
  hostname: z.string().nullable().describe("The host's name, as the agent registered"),
  joinTokenExpiresAt: Timestamp.nullable().describe('When the unused join token expires; null when none is outstanding'),
  createdAt: Timestamp,
});

/** What a server's agent needs to join, answered once when a join token is issued. */
export const ServerJoin = z.object({
  token: z.string().describe('One-time join token (shown once; stored only as a hash). Single use.'),
  expiresAt: Timestamp,
  env: z
    .object({
      SKIFF_SERVER_ID: z.string(),
      SKIFF_JOIN_TOKEN: z.string(),
      SKIFF_CONTROL_PLANE_GRPC: z.string(),
      SKIFF_NATS_URL: z.string(),
      SKIFF_CONTROL_PLANE_CA: z
        .string()
        .optional()
        .describe(
          "The agent channel's CA certificate (PEM, base64), made at the control plane's first boot. The agent " +
            'trusts only it for gRPC and NATS (TLS), and keeps it in its data directory. Absent when the channel has no TLS.',
        ),
      SKIFF_COMMAND_KEY: z.string(),
    })
    .describe(
      "The agent's environment. The addresses are the control plane's `SKIFF_AGENT_GRPC_ADDRESS` and " +
        '`SKIFF_AGENT_NATS_URL` (defaults: its gRPC listen address and its own NATS URL). `SKIFF_COMMAND_KEY` is ' +
        "the control plane's public command key (Ed25519, base64 SPKI), which the agent pins at join: it runs only " +
        'commands and control requests signed with it.',
    ),
  command: z
    .string()
    .describe(
      'A command to paste on the server: runs the agent bundle (`dist/agent/main.mjs` of a Skiff ' +
        'build, copied as `skiff-agent.mjs`) with that environment. The agent stores the credential it ' +
        'receives in its data directory (mode 0600) and needs no token after that.',
    ),
});

export const ServerWithJoin = ServerRecord.extend({ join: ServerJoin });
