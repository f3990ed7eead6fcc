import type { Command } from '@skiff/proto';
import { Invalid } from '../../errors.js';

/**
 * The most bytes an encoded Command may have when it is queued. NATS refuses a message over
 * the server's `max_payload` (1 MiB by default, and tools/up keeps the default; the
 * `Nats-Msg-Id` header counts toward it), and the check runs in the queueing transaction,
 * without NATS: so it is the default less 64 KiB of headroom. A server configured lower still
 * refuses such a command when it is published; the relay then ends that command alone.
 */
export const MAX_COMMAND_BYTES = 1024 * 1024 - 64 * 1024;

/** The parts of a command that user input can make big, by the input field they come from. */
function partsOf(command: Command): { field: string; bytes: number }[] {
  const p = command.payload;
  switch (p?.$case) {
    case 'deployApplication':
      return [
        { field: 'env', bytes: mapBytes(p.value.env) },
        { field: 'buildArgs', bytes: mapBytes(p.value.build?.buildArgs) },
        { field: 'buildSecrets', bytes: mapBytes(p.value.build?.buildSecrets) },
      ];
    case 'deployCompose':
      return [
        { field: 'composeFile', bytes: utf8(p.value.composeText) },
        { field: 'env', bytes: utf8(p.value.envFile) },
        { field: 'command', bytes: p.value.command.reduce((n, s) => n + utf8(s), 0) },
      ];
    case 'applyProxyConfig':
      return [{ field: 'domains', bytes: utf8(p.value.inputJson) }];
    default:
      return [];
  }
}

/**
 * Refuses (BAD_REQUEST) a command whose encoding is over MAX_COMMAND_BYTES, naming the input
 * field of its largest part (`env`, `buildArgs`, `buildSecrets`, `composeFile`, …): such a
 * command could never reach its agent. `encoded`: the Command's encoded size.
 */
export function checkCommandSize(command: Command, encoded: number): void {
  if (encoded <= MAX_COMMAND_BYTES) return;
  const largest = partsOf(command).reduce<{ field: string; bytes: number } | undefined>((a, b) => (a && a.bytes >= b.bytes ? a : b), undefined);
  const field = largest && largest.bytes > 0 ? largest.field : 'command';
  const what = largest && largest.bytes > 0 ? `${field} is ${largest.bytes} bytes: ` : '';
  throw Invalid(
    field,
    `${what}the command for the agent would be ${encoded} bytes, over the ${MAX_COMMAND_BYTES} bytes a command may carry (NATS's message limit, with headroom)`,
  );
}

const utf8 = (s: string | undefined) => (s ? Buffer.byteLength(s, 'utf8') : 0);
const mapBytes = (m: Record<string, string> | undefined) => (m ? Object.entries(m).reduce((n, [k, v]) => n + utf8(k) + utf8(v), 0) : 0);
