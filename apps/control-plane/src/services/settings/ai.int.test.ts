import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

const config = (overrides: Record<string, unknown> = {}) => ({
  name: 'OpenAI',
  apiUrl: 'https://api.openai.com/v1',
  apiKey: 'sk-very-secret-key',
  model: 'gpt-4o-mini',
  isEnabled: true,
  ...overrides,
});

const create = async (overrides: Record<string, unknown> = {}) => {
  const res = await t.call('ai.create', config(overrides));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

describe('AI configurations', () => {
  it('creates, reads by one and get, and lists them oldest first', async () => {
    const first = await create();
    expect(first).toMatchObject({ name: 'OpenAI', apiUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', isEnabled: true, hasApiKey: true, organizationId: t.organizationId });
    expect(first.aiId).toMatch(/^ai_/);
    expect((await t.call('ai.one', { aiId: first.aiId })).body).toEqual(first);
    expect((await t.call('ai.get', { aiId: first.aiId })).body).toEqual(first);
    const second = await create({ name: 'Local', apiUrl: 'http://127.0.0.1:11434/v1', apiKey: '' });
    expect(second.hasApiKey).toBe(false);
    const all = (await t.call('ai.getAll')).body.map((a: { aiId: string }) => a.aiId);
    expect(all.indexOf(first.aiId)).toBeLessThan(all.indexOf(second.aiId));
  });

  it('updates the fields given, keeps the key when left out, removes it when empty', async () => {
    const ai = await create();
    const res = await t.call('ai.update', { aiId: ai.aiId, model: 'gpt-4o', isEnabled: false, createdAt: '2000-01-01T00:00:00Z' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...ai, model: 'gpt-4o', isEnabled: false });
    const keyBefore = (await t.db.selectFrom('aiConfigs').select('apiKey').where('id', '=', ai.aiId).executeTakeFirstOrThrow()).apiKey;
    await t.call('ai.update', { aiId: ai.aiId, name: 'Renamed' });
    const keyAfter = (await t.db.selectFrom('aiConfigs').select('apiKey').where('id', '=', ai.aiId).executeTakeFirstOrThrow()).apiKey;
    expect(keyAfter).toBe(keyBefore);
    const cleared = await t.call('ai.update', { aiId: ai.aiId, apiKey: '' });
    expect(cleared.body.hasApiKey).toBe(false);
    const set = await t.call('ai.update', { aiId: ai.aiId, apiKey: 'sk-new' });
    expect(set.body.hasApiKey).toBe(true);
  });

  it('never returns the key and keeps it encrypted at rest', async () => {
    const ai = await create({ apiKey: 'sk-top-secret-value' });
    for (const body of [ai, (await t.call('ai.one', { aiId: ai.aiId })).body, (await t.call('ai.getAll')).body]) {
      expect(JSON.stringify(body)).not.toContain('sk-top-secret-value');
    }
    expect(ai).not.toHaveProperty('apiKey');
    const row = await t.db.selectFrom('aiConfigs').selectAll().where('id', '=', ai.aiId).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('sk-top-secret-value');
    expect(t.platform.secrets.open(row.apiKey)).toBe('sk-top-secret-value');
  });

  it('refuses link-local and cloud-metadata endpoints, naming apiUrl, and changes nothing', async () => {
    for (const apiUrl of [
      'http://169.254.169.254/latest/meta-data',
      'http://[fe80::1]:8080/v1',
      'http://metadata.google.internal/computeMetadata/v1',
      'http://[::ffff:169.254.169.254]/',
      'ftp://models.example.com',
    ]) {
      const res = await t.call('ai.create', config({ apiUrl }));
      expect(res.status, apiUrl).toBe(400);
      expect(res.body.issues[0].path).toEqual(['apiUrl']);
    }
    const ai = await create();
    const res = await t.call('ai.update', { aiId: ai.aiId, apiUrl: 'http://169.254.169.254/' });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['apiUrl']);
    expect((await t.call('ai.one', { aiId: ai.aiId })).body.apiUrl).toBe('https://api.openai.com/v1');
  });

  it('deletes, answering the removed record', async () => {
    const ai = await create();
    const res = await t.call('ai.delete', { aiId: ai.aiId });
    expect(res.body).toEqual(ai);
    expect((await t.call('ai.one', { aiId: ai.aiId })).status).toBe(404);
    expect((await t.call('ai.delete', { aiId: ai.aiId })).status).toBe(404);
  });
});

describe('AI configuration permissions', () => {
  it('lets members read (without the key) but only admins write', async () => {
    const ai = await create();
    const member = t.as((await addMember(t, 'ai-member@example.com')).key);
    const read = await member('ai.one', { aiId: ai.aiId });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(ai);
    expect((await member('ai.getAll')).status).toBe(200);
    expect((await member('ai.create', config())).status).toBe(403);
    expect((await member('ai.update', { aiId: ai.aiId, model: 'x' })).status).toBe(403);
    expect((await member('ai.delete', { aiId: ai.aiId })).status).toBe(403);
    expect((await t.call('ai.one', { aiId: ai.aiId })).body.model).toBe('gpt-4o-mini');

    const admin = t.as((await addMember(t, 'ai-admin@example.com', 'admin')).key);
    const made = await admin('ai.create', config({ name: 'By admin' }));
    expect(made.status).toBe(200);
    expect((await admin('ai.update', { aiId: ai.aiId, model: 'gpt-4.1' })).body.model).toBe('gpt-4.1');
    expect((await admin('ai.delete', { aiId: made.body.aiId })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization, and lists only its own', async () => {
    const ai = await create();
    const other = await t.call('organization.create', { name: 'AI elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    expect((await outsider('ai.one', { aiId: ai.aiId })).status).toBe(404);
    expect((await outsider('ai.get', { aiId: ai.aiId })).status).toBe(404);
    expect((await outsider('ai.update', { aiId: ai.aiId, name: 'stolen' })).status).toBe(404);
    expect((await outsider('ai.delete', { aiId: ai.aiId })).status).toBe(404);
    expect((await outsider('ai.getAll')).body).toEqual([]);
    expect((await t.call('ai.one', { aiId: ai.aiId })).body.name).toBe('OpenAI');
  });
});
