// The dashboard in a real browser (Debian's Chromium driven by playwright-core) against a running
// control plane on Postgres: sign in, create a project, see it listed, open a workload, see a
// live event arrive. Screenshots of each page go to .tmp/dashboard-screenshots/.
import { mkdir, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import { type Browser, type Page, chromium } from 'playwright-core';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listen } from '../../control-plane/src/http/serve.js';
import { type TestPlatform, startTestPlatform } from '../../control-plane/src/testing/harness.js';
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

  await page.getByRole('link', { name: 'Projects' }).click();
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
  await shot(page, '3-workload');

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
