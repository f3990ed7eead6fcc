// The dashboard in a real browser (Debian's Chromium driven by playwright-core) against a running
// control plane on Postgres: sign in, create a project, see it listed, open a workload, see a
// live event arrive, add a domain and a basic auth user; then every other page: servers with live metrics and a server added, notifications (a channel
// tested against an HTTP sink), members and API keys, backups (a destination made with the
// keyboard only, against an S3 server; a database service made on its environment's page and
// a backup schedule of it), settings and a database (a libSQL one's backups page schedules a dump of its whole database). Screenshots of each page go to .tmp/dashboard-screenshots/.
import { mkdir, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import { type Browser, type Page, chromium } from 'playwright-core';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listen } from '../../control-plane/src/http/serve.js';
import { type TestPlatform, startTestPlatform } from '../../control-plane/src/testing/harness.js';
import { startHttpSink } from '../../control-plane/src/testing/sinks.js';
import { startS3, S3_ACCESS_KEY, S3_SECRET_KEY } from '../../control-plane/src/testing/s3-server.js';
import { buildDashboard } from './testing/build.js';

const CHROMIUM = '/usr/bin/chromium';
const shots = join(import.meta.dirname, '..', '..', '..', '.tmp', 'dashboard-screenshots');

let dir = '';
let t: TestPlatform;
let server: ServerType;
let origin = '';
let browser: Browser;

beforeAll(async () => {
  dir = await buildDashboard();
  t = await startTestPlatform({ dashboardDir: dir });
  server = listen(t.platform.app, { port: 0, hostname: '127.0.0.1', log: pino({ level: 'silent' }) });
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // --no-sandbox: the tests run as root, where Chromium's sandbox refuses to start.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  await mkdir(shots, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

it('signs in, creates a project, opens a workload, shows a live event, switches organization and signs out', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } }); // a phone's width
  const page = await context.newPage();
  const refusals: string[] = [];
  page.on('console', (m) => m.type() === 'error' && refusals.push(m.text()));

  // First page interactive: from navigation start until the key field accepts input.
  await page.goto(origin, { waitUntil: 'commit' });
  await page.getByLabel('API key').waitFor({ state: 'visible' });
  const interactiveMs = await page.evaluate(() => performance.now());
  console.log(`dashboard: first page interactive after ${interactiveMs.toFixed(0)} ms (navigation start → sign-in form)`);
  await shot(page, '1-sign-in');

  // A wrong key says why and stays on the form.
  await page.getByLabel('API key').fill('skf_wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Invalid API key/);

  await page.getByLabel('API key').fill(t.ownerKey);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  // The key is in the tab's session, never in localStorage.
  expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(t.ownerKey);
  expect(await page.evaluate(() => sessionStorage.getItem('skiff.session'))).toContain(t.ownerKey);

  await page.getByLabel('Project name').fill('browser-shop');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.getByRole('heading', { name: 'browser-shop', level: 1 }).waitFor();
  const projects = (await t.call('project.all')).body as { name: string; environments: { name: string }[] }[];
  expect(projects.map((p) => p.name)).toContain('browser-shop');
  const envName = projects.find((p) => p.name === 'browser-shop')!.environments[0]!.name;

  await page.getByRole('main').getByRole('link', { name: 'Projects' }).click();
  await page.getByRole('link', { name: 'browser-shop' }).waitFor();
  await shot(page, '2-projects');

  await page.getByRole('link', { name: 'browser-shop' }).click();
  await page.getByLabel(`New application in ${envName}`).fill('web');
  await page.getByRole('button', { name: 'Create application' }).click();
  await page.getByRole('link', { name: 'web' }).click();
  await page.getByRole('heading', { name: 'web', level: 1 }).waitFor();
  await page.getByText('idle', { exact: true }).first().waitFor();
  await page.getByRole('heading', { name: 'Deployments' }).waitFor();
  await page.getByText('No deployment yet.').waitFor();
  await page.getByText('Live events (live)').waitFor();

  // A domain: a refused host is said next to its field; a good one is listed with its HTTPS state.
  await page.getByLabel('Host', { exact: true }).fill('not a host!');
  await page.getByRole('button', { name: 'Add domain' }).click();
  await page.locator('input[aria-invalid=true]').waitFor();
  expect(await page.getByLabel('Host', { exact: true }).getAttribute('aria-invalid')).toBe('true');
  await page.getByLabel('Host', { exact: true }).fill('shop.example.com');
  await page.getByLabel('Container port').fill('8080');
  await page.getByRole('button', { name: 'Add domain' }).click();
  await page.getByRole('list', { name: 'Domains' }).getByText("HTTPS (Let's Encrypt)").waitFor();
  expect(await page.locator('input[aria-invalid=true]').count()).toBe(0);
  const appId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
  expect((await t.call('domain.byApplicationId', { applicationId: appId })).body).toMatchObject([{ host: 'shop.example.com', port: 8080, https: true, certificateType: 'acme' }]);
  // A basic auth user: listed by name, the password sent and gone from the page; then removed.
  t.watch.secret('gate-pw-4711');
  await page.getByLabel('User name').fill('visitor');
  await page.getByLabel('Password', { exact: true }).fill('gate-pw-4711');
  await page.getByRole('button', { name: 'Add user' }).click();
  await page.getByRole('list', { name: 'Basic auth users' }).getByText('visitor').waitFor();
  expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
  expect(await page.content()).not.toContain('gate-pw-4711');
  await shot(page, '3-workload');
  await page.getByRole('button', { name: 'Remove user visitor' }).click();
  await page.getByText('visitor removed').waitFor();
  // The notice may show before the list re-renders (seen under load).
  await page.getByRole('list', { name: 'Basic auth users' }).waitFor({ state: 'detached', timeout: 10_000 });
  expect(await page.getByRole('list', { name: 'Basic auth users' }).count()).toBe(0);

  // An event recorded now (a threshold report) reaches the open page through /api/events.
  const { token } = (await t.call('user.getMetricsToken')).body as { token: string };
  t.watch.secret(token);
  const report = { ServerType: 'Platform', Type: 'CPU', Value: 97, Threshold: 80, Message: 'CPU 97% above 80%', Timestamp: new Date().toISOString(), Token: token };
  expect((await t.as(null)('notification.receiveNotification', report)).status).toBe(200);
  await page.getByRole('list', { name: 'Events' }).getByText('serverThreshold').waitFor({ timeout: 10_000 });
  await shot(page, '4-live-event');

  // Switching organization: the other one's projects, through a key made for it; sign-out deletes that key.
  await t.call('organization.create', { name: 'Second org' });
  const keyCount = async () => (await t.db.selectFrom('apiKeys').select('id').execute()).length;
  const keysBefore = await keyCount();
  // A reload keeps the session (sessionStorage) and lists the new organization.
  await page.reload();
  await page.getByRole('heading', { name: 'web', level: 1 }).waitFor();
  await page.getByLabel('Organization').selectOption({ label: 'Second org' });
  await page.getByText('No project yet.').waitFor();
  expect(await keyCount()).toBe(keysBefore + 1);
  await page.getByLabel('Organization').selectOption({ label: 'Default' });
  await page.getByRole('link', { name: 'browser-shop' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key').waitFor();
  await expect.poll(keyCount).toBe(keysBefore);
  expect(await page.evaluate(() => sessionStorage.getItem('skiff.session'))).toBeNull();

  expect(refusals.filter((r) => /Content Security Policy/i.test(r))).toEqual([]);
  await context.close();
}, 60_000);

it('shows servers with live metrics, tests a notification channel, makes an API key and a destination, and the other pages', async () => {
  const sink = await startHttpSink();
  const s3 = await startS3(['dash-backups']);
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  try {
    await page.goto(origin);
    await page.getByLabel('API key').fill(t.ownerKey);
    await page.keyboard.press('Enter');
    const nav = page.getByRole('navigation', { name: 'Sections' });
    const heading = (name: string) => page.getByRole('heading', { name, level: 1 }).waitFor();

    // Servers: the platform host's metrics as charts, refreshed while the page is open.
    const sample = (at: Date, cpu: number) => ({ serverId: 'local', resolution: 0 as const, at, cpuPercent: cpu, cpuMax: cpu, memoryUsed: 2 ** 30, memoryMax: 2 ** 30, memoryTotal: 2 ** 32, diskUsed: 2 ** 34, diskTotal: 2 ** 36, networkRx: 1000 + cpu * 10, networkTx: 500 });
    const now = Date.now();
    await t.db.insertInto('hostMetrics').values(Array.from({ length: 20 }, (_, i) => sample(new Date(now - (20 - i) * 10_000), 20 + 30 * Math.abs(Math.sin(i / 3))))).execute();
    await nav.getByRole('link', { name: 'Servers' }).click();
    await heading('Servers');
    await page.getByRole('link', { name: 'Platform host' }).click();
    await heading('Platform host');
    await page.getByText('Last 20 samples').waitFor();
    expect(await page.getByRole('img', { name: /^CPU: CPU \d/ }).count()).toBe(1);
    await t.db.insertInto('hostMetrics').values(sample(new Date(), 77)).execute();
    await page.getByRole('img', { name: 'CPU: CPU 77.0 %' }).waitFor({ timeout: 15_000 });
    // No agent runs here: the containers panel says why rather than failing the page.
    await page.getByRole('heading', { name: 'Containers' }).waitFor();
    await shot(page, '5-server');

    // A server added: its join command shown once, then gone from the page.
    await nav.getByRole('link', { name: 'Servers' }).click();
    await page.getByLabel('Server name').fill('edge-1');
    await page.getByLabel('Address', { exact: true }).fill('203.0.113.7');
    await page.getByRole('button', { name: 'Add server' }).click();
    const command = (await page.getByLabel('Join command').textContent())!;
    expect(command).toContain('skiff-agent.mjs');
    await page.getByRole('cell', { name: 'edge-1', exact: true }).waitFor();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.toContain(command.slice(0, 40));

    // Notifications: a Slack-style channel, its test message reaching the sink, then created.
    await nav.getByRole('link', { name: 'Notifications' }).click();
    await heading('Notifications');
    const webhookUrl = `${sink.url}/hook/T000/secret-part`;
    t.watch.secret('secret-part');
    await page.getByLabel('Channel name').fill('browser-ops');
    await page.getByLabel('Webhook URL').fill(webhookUrl);
    await page.getByLabel('Channel', { exact: true }).fill('#ops');
    await page.getByRole('button', { name: /^Test/ }).click();
    await page.getByText('Test message sent').waitFor();
    expect(sink.requests.map((r) => r.url)).toEqual(['/hook/T000/secret-part']);
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('cell', { name: 'browser-ops', exact: true }).waitFor();
    const channels = (await t.call('notification.all')).body as { name: string; kind: string; hasWebhookUrl: boolean }[];
    expect(channels).toMatchObject([{ name: 'browser-ops', kind: 'hook', hasWebhookUrl: true }]);
    // The stored URL is write-only: the edit form never shows it.
    await page.getByRole('button', { name: 'Edit browser-ops' }).click();
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe('');
    expect(await page.content()).not.toContain('secret-part');
    await page.getByRole('heading', { name: 'Recent deliveries' }).waitFor();
    await shot(page, '6-notifications');

    // API keys: the new key is shown once, works, and is deleted.
    await nav.getByRole('link', { name: 'Members' }).click();
    await heading('Members and API keys');
    await page.getByText('owner@test.local').waitFor();
    await page.getByLabel('Key name').fill('browser-key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('code.key').textContent())!;
    t.watch.secret(key);
    expect(key).toMatch(/^skf_/);
    expect((await t.as(key)('user.get')).status).toBe(200);
    await page.getByRole('cell', { name: 'browser-key', exact: true }).waitFor();
    await shot(page, '7-members');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.toContain(key);
    await page.getByRole('button', { name: 'Delete key browser-key' }).click();
    await page.getByText('Key browser-key deleted').waitFor();
    expect((await t.as(key)('user.get')).status).toBe(401);

    // Backups: a destination, with the keyboard only, from the section link to the created row.
    await nav.getByRole('link', { name: 'Backups' }).focus();
    await page.keyboard.press('Enter');
    await heading('Backups');
    await page.getByText('No destination yet.').waitFor();
    const type = async (text: string) => {
      await page.keyboard.press('Tab');
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type(text);
    };
    await type('offsite'); // focus starts on the page's heading: the first field is the name
    expect(await page.evaluate('document.activeElement.id')).toBe(await page.getByLabel('Destination name').getAttribute('id'));
    await type(s3.endpoint);
    await type('us-east-1');
    await type('dash-backups');
    await type(S3_ACCESS_KEY);
    await type(S3_SECRET_KEY);
    await page.keyboard.press('Tab'); // Test connection
    await page.keyboard.press('Enter');
    await page.getByText('Connection works').waitFor();
    await page.keyboard.press('Tab'); // Create destination
    await page.keyboard.press('Enter');
    await page.getByRole('cell', { name: 'dash-backups', exact: true }).waitFor();
    const destinations = (await t.call('destination.all')).body as { name: string; destinationId: string }[];
    expect(destinations.map((d) => d.name)).toEqual(['offsite']);

    // A database's backup with one run in the bucket: listed, and its restore asks for confirmation.
    // A database service made on its environment's page, its password left to the API.
    const project = (await t.call('project.create', { name: 'data' })).body as { projectId: string };
    await page.goto(`${origin}/projects/${project.projectId}`);
    await page.getByLabel('Engine', { exact: true }).selectOption({ label: 'PostgreSQL' });
    await page.getByLabel('Database service name').fill('orders');
    await page.getByRole('button', { name: 'Create database' }).click();
    await page.getByText('Database orders created with a generated password').waitFor();
    await page.getByRole('link', { name: 'orders' }).waitFor();
    const services = ((await t.call('project.one', { projectId: project.projectId })).body as { environments: { services: { id: string; type: string; name: string }[] }[] }).environments[0]!.services;
    expect(services).toMatchObject([{ type: 'database', name: 'orders' }]);
    const db = { dbAId: services[0]!.id };
    expect((await t.call('dbA.one', { dbAId: db.dbAId })).body).toMatchObject({ hasDatabasePassword: true, databaseName: 'app' });
    const backup = (await t.call('backup.create', { schedule: '0 3 * * *', prefix: 'nightly', destinationId: destinations[0]!.destinationId, database: 'app', dbAId: db.dbAId, databaseType: 'dbA' })).body as { backupId: string };
    await s3.put('dash-backups', `nightly/${backup.backupId}/2026-12-01T03-00-00-000Z.dump.gz`, 'dump');
    await page.goto(`${origin}/backups/database/${db.dbAId}`);
    await page.getByRole('button', { name: 'Runs of dbA database app' }).click();
    await page.getByRole('cell', { name: '2026-12-01T03-00-00-000Z.dump.gz', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Restore… 2026-12-01T03-00-00-000Z.dump.gz' }).click();
    expect(await page.getByRole('button', { name: 'Restore', exact: true }).isDisabled()).toBe(true);
    await page.getByLabel('Replace the data of app with 2026-12-01T03-00-00-000Z.dump.gz').check();
    await page.getByRole('button', { name: 'Restore', exact: true }).click();
    // The service was never deployed: the API refuses, and the page says why.
    await page.locator('form.confirm [role=alert]').waitFor();

    // A second schedule of the database, from its backups page: the cron schedule said in words.
    await page.getByLabel('Destination', { exact: true }).selectOption({ label: 'offsite' });
    await page.getByLabel('Schedule (cron)').fill('0 4 * * 0');
    await page.getByText('Every Sunday at 04:00 UTC').waitFor();
    await page.getByLabel('Prefix (folder in the bucket)').fill('weekly');
    await page.getByLabel('Keep the latest').fill('4');
    await page.getByRole('button', { name: 'Schedule backup' }).click();
    await page.getByText('Backup of app scheduled').waitFor();
    await expect.poll(() => page.getByRole('button', { name: 'Runs of dbA database app' }).count()).toBe(2);
    const schedules = (await t.call('user.getBackups')).body as { schedule: string; prefix: string; keepLatestCount: number | null; dbAId: string | null }[];
    expect(schedules.find((b) => b.schedule === '0 4 * * 0')).toMatchObject({ prefix: 'weekly/', keepLatestCount: 4, dbAId: db.dbAId });
    await shot(page, '8-backups');

    // Settings: the owner administers the platform host; the version is shown.
    await nav.getByRole('link', { name: 'Settings' }).click();
    await heading('Settings');
    await page.getByText('Skiff 0.0.0-test').waitFor();
    await page.getByRole('heading', { name: 'Platform host' }).waitFor();
    await page.getByRole('heading', { name: 'Proxy files' }).waitFor();
    await shot(page, '9-settings');

    // A database service's page: status, actions, connection strings with a typed password masked until shown.
    await page.goto(`${origin}/workloads/database/${db.dbAId}`);
    await heading('orders');
    await page.getByText('PostgreSQL database', { exact: false }).waitFor();
    t.watch.secret('pw-s3cret-1');
    await page.getByLabel('Database password').fill('pw-s3cret-1');
    await page.getByRole('button', { name: 'Fill in connection strings' }).click();
    await page.getByLabel('internal connection string (hidden)').waitFor();
    expect(await page.content()).not.toContain('pw-s3cret-1');
    await page.getByRole('button', { name: 'Show internal connection string' }).click();
    await page.getByText(/:pw-s3cret-1@/).waitFor();
    await page.getByRole('link', { name: 'Backups of this database' }).waitFor();
    await shot(page, '10-database');

    // A libSQL database is backed up like the others: its page links to its backups, whose
    // schedule form dumps its whole database (no database name to type).
    const environmentId = ((await t.call('project.one', { projectId: project.projectId })).body as { environments: { environmentId: string }[] }).environments[0]!.environmentId;
    const libsql = (await t.call('dbE.create', { name: 'edge', environmentId })).body as { dbEId: string };
    await page.goto(`${origin}/workloads/database/${libsql.dbEId}`);
    await heading('edge');
    await page.getByRole('link', { name: 'Backups of this database' }).click();
    await page.getByRole('button', { name: 'Schedule backup' }).waitFor();
    await page.getByText('Of edge: its whole database.').waitFor();
    expect(await page.getByLabel('Database to dump').count()).toBe(0);
    expect(await page.getByText(/does not back up libSQL/).count()).toBe(0);

    expect(errors.filter((r) => /Content Security Policy/i.test(r))).toEqual([]);
  } finally {
    await context.close();
    await sink.close();
    await s3.close();
  }
}, 60_000);
