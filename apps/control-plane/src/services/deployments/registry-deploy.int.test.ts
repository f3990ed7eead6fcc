// application.deploy of an image in a private registry, against real Postgres: the command
// carries the application's registry login (the password opened from its seal, sealed again
// in the outbox), and a registryUrl that is not the image's registry is refused before
// anything is queued.
import { Command, type DeployApplication } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';

const PASSWORD = 'registry-pass-Zq81xv';

let t: TestPlatform;
let env: string;
beforeAll(async () => {
  t = await startTestPlatform();
  t.watch.secret(PASSWORD);
  env = (await t.call('project.create', { name: 'registry' })).body.environments[0].environmentId;
});
// close() fails the file when the registry password is in the control plane's log.
afterAll(() => t?.close());

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

async function registryApp(provider: { containerImage: string; username: string | null; password: string | null; registryUrl: string | null }) {
  const app = await ok('application.create', { name: 'private', environmentId: env, sourceType: 'container' });
  await ok('application.saveContainerProvider', { applicationId: app.applicationId, ...provider });
  return app as { applicationId: string };
}

const commandsOf = (applicationId: string) =>
  t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `application:${applicationId}`).execute();
const deploymentsOf = (applicationId: string) => t.db.selectFrom('deployments').selectAll().where('applicationId', '=', applicationId).execute();

async function deployedCommand(applicationId: string): Promise<{ payload: string; deploy: DeployApplication }> {
  await ok('application.deploy', { applicationId });
  const [row] = await commandsOf(applicationId);
  const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row!.payload));
  if (command.payload?.$case !== 'deployApplication') throw new Error('not a DeployApplication');
  return { payload: row!.payload, deploy: command.payload.value };
}

describe('deploying an image from a private registry', () => {
  it('sends the registry login with the command, sealed in the outbox and never in a response', async () => {
    const app = await registryApp({
      containerImage: '127.0.0.1:5000/acme/web:1.2',
      username: 'deployer',
      password: PASSWORD,
      registryUrl: 'http://127.0.0.1:5000/',
    });
    const one = await ok('application.one', { applicationId: app.applicationId });
    expect(one).toMatchObject({ username: 'deployer', hasPassword: true, registryUrl: 'http://127.0.0.1:5000/' });
    expect(JSON.stringify(one)).not.toContain(PASSWORD);

    const { payload, deploy } = await deployedCommand(app.applicationId);
    expect(deploy.image).toBe('127.0.0.1:5000/acme/web:1.2');
    expect(deploy.registryAuth).toEqual({ serverAddress: '127.0.0.1:5000', username: 'deployer', password: PASSWORD });
    expect(payload).not.toContain(PASSWORD);
    expect(payload).not.toContain(Buffer.from(PASSWORD).toString('base64').slice(0, 12));
    expect(JSON.stringify(deploy.spec)).not.toContain(PASSWORD);
    expect(JSON.stringify(await ok('deployment.all', { applicationId: app.applicationId }))).not.toContain(PASSWORD);
  });

  it("takes the registry from the image when registryUrl is empty, and sends no login without credentials", async () => {
    const withLogin = await registryApp({ containerImage: 'registry.example.com/team/api:7', username: 'u', password: PASSWORD, registryUrl: null });
    expect((await deployedCommand(withLogin.applicationId)).deploy.registryAuth).toEqual({
      serverAddress: 'registry.example.com',
      username: 'u',
      password: PASSWORD,
    });
    const hub = await registryApp({ containerImage: 'team/api:7', username: 'u', password: PASSWORD, registryUrl: 'docker.io' });
    expect((await deployedCommand(hub.applicationId)).deploy.registryAuth?.serverAddress).toBe('https://index.docker.io/v1/');
    const open = await registryApp({ containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
    expect((await deployedCommand(open.applicationId)).deploy.registryAuth).toBeUndefined();
  });

  it('refuses a registryUrl other than the registry of the image, naming registryUrl, and queues nothing', async () => {
    const app = await registryApp({ containerImage: '127.0.0.1:5000/acme/web:1.2', username: 'u', password: PASSWORD, registryUrl: 'ghcr.io' });
    const res = await t.call('application.deploy', { applicationId: app.applicationId });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_REQUEST');
    expect(res.body.issues).toEqual([{ path: ['registryUrl'], message: expect.stringContaining('is in registry 127.0.0.1:5000, not ghcr.io') }]);
    expect(JSON.stringify(res.body)).not.toContain(PASSWORD);
    expect(await deploymentsOf(app.applicationId)).toEqual([]);
    expect(await commandsOf(app.applicationId)).toEqual([]);
  });

  it('refuses half a login, naming the missing field', async () => {
    const app = await registryApp({ containerImage: '127.0.0.1:5000/acme/web:1.2', username: 'u', password: null, registryUrl: null });
    const res = await t.call('application.redeploy', { applicationId: app.applicationId });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['password']);
    expect(await deploymentsOf(app.applicationId)).toEqual([]);
  });
});
