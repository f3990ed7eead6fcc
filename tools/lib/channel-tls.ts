// Makes the agent channel's CA and server certificate (apps/control-plane/src/agents/tls/
// channel-tls.ts) in <dir> before tools/up starts NATS, which serves that certificate; the
// control plane does the same at its start and finds them made. The names come from the
// environment, as the control plane reads them (SKIFF_PUBLIC_IP, SKIFF_GRPC_HOST,
// SKIFF_NATS_HOST, SKIFF_AGENT_GRPC_ADDRESS, SKIFF_AGENT_NATS_URL).
// Usage: node --import tsx tools/lib/channel-tls.ts <dir>
// Prints `issued` when the server certificate is new (a running NATS must load it), else `kept`.
import { channelTlsNames, ensureChannelTls } from '../../apps/control-plane/src/agents/tls/channel-tls.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: channel-tls.ts <dir>');
  process.exit(2);
}
try {
  const tls = ensureChannelTls(dir, channelTlsNames(process.env));
  process.stdout.write(tls.issued.server ? 'issued\n' : 'kept\n');
} catch (err) {
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
