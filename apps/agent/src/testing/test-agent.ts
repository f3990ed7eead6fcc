import { Agent, type AgentDeps } from '../agent.js';
import { CommandJournal } from '../pipeline/journal.js';
import { ReportClient } from '../reports/client.js';
import { CommandVerifier } from '@skiff/domain';
import { TEST_COMMAND_SIGNER } from './nats.js';

export interface TestAgentOptions extends Omit<AgentDeps, 'journal' | 'reports' | 'verifier'> {
  /** The command key the agent trusts; by default the test control plane's (TEST_COMMAND_SIGNER). */
  verifier?: CommandVerifier;
  /** The journal's directory. */
  journalDir: string;
  /** The report server's address (testing/report-server.ts). */
  reportTarget: string;
  credential: string;
}

/**
 * An agent as the tests run it: its journal in `journalDir`, reporting to the test report
 * server with quick retries, consuming with quick backoff; started and ready.
 */
export async function startTestAgent(options: TestAgentOptions) {
  const { journalDir, reportTarget, credential, ...deps } = options;
  const journal = await CommandJournal.open(journalDir);
  const reports = new ReportClient({
    target: reportTarget,
    credential,
    log: deps.log,
    retryInitialMs: 50,
    retryMaxMs: 500,
    // As main.ts: a result the control plane took is not reported again at the next start.
    onResultSettled: (commandId) => void journal.delivered(commandId).catch(() => {}),
  });
  const verifier = deps.verifier ?? CommandVerifier.fromText(TEST_COMMAND_SIGNER.publicKey);
  const agent = new Agent({ consumer: { retryInitialMs: 100, retryMaxMs: 1_000 }, ...deps, verifier, journal, reports });
  agent.start();
  await agent.ready();
  /** Stops the agent, delivers what it still reports (5 s at most), and closes its journal. */
  const stop = async () => {
    await agent.stop();
    await reports.flush(5_000);
    reports.close();
    await journal.close();
  };
  return { agent, journal, reports, stop };
}
