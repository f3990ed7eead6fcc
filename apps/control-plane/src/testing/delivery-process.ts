// A process that only runs the delivery worker (with the test's JSON sender) against a test
// database, so a test can kill it with SIGKILL mid-delivery and start another:
// `node --import tsx delivery-process.ts` with SKIFF_TEST_DELIVERY_DB (Postgres URL) and
// SKIFF_TEST_DELIVERY_KEY (the platform's secret key, hex).
import { openDatabase } from '@skiff/db';
import { SecretBox } from '../crypto/secret-box.js';
import { createLogger } from '../logger.js';
import { DeliveryWorker } from '../services/events/delivery-worker.js';
import { jsonSender } from './event-sink.js';

const database = await openDatabase({ url: process.env.SKIFF_TEST_DELIVERY_DB });
const worker = new DeliveryWorker({
  db: database.db,
  secrets: new SecretBox(Buffer.from(process.env.SKIFF_TEST_DELIVERY_KEY ?? '', 'hex')),
  senders: { hook: jsonSender },
  log: createLogger({ level: 'warn' }),
  pollMs: 50,
  leaseMs: Number(process.env.SKIFF_TEST_DELIVERY_LEASE_MS ?? 1500),
  rate: { burst: 1000, intervalMs: 1 },
  batchSize: 5,
});
worker.start();
process.stdout.write('delivery worker started\n');
process.on('SIGTERM', () => void worker.stop().then(() => database.close()).then(() => process.exit(0)));
