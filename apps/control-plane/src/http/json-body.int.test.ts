// What a JSON body must be before any field is looked at: declared JSON, UTF-8, each key once.
// Each refusal is BAD_REQUEST in the envelope and changes nothing.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ database: 'pglite' });
});
afterAll(() => t?.close());

async function send(body: string | Uint8Array, contentType: string | null, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { 'x-api-key': t.ownerKey, ...extra };
  if (contentType !== null) headers['content-type'] = contentType;
  const res = await t.platform.app.request('http://skiff.test/api/project.create', { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as any };
}
const projectNames = async () => ((await t.call('project.all', {})).body as Array<{ name: string }>).map((p) => p.name).sort();

describe('a JSON body', () => {
  it('is refused when its bytes are not UTF-8, rather than stored with replacement characters', async () => {
    const before = await projectNames();
    for (const bytes of [[0xff, 0xfe, 0xc3], [0xed, 0xa0, 0x80]]) {
      const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')]);
      const res = await send(body, 'application/json');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'BAD_REQUEST', message: 'The request body is not valid UTF-8' });
    }
    expect(await projectNames()).toEqual(before);
  });

  it('is read as JSON whatever type it declares (curl -d declares a form)', async () => {
    for (const type of ['application/json', 'Application/JSON; charset=utf-8', 'application/vnd.skiff+json', 'text/plain', 'application/x-www-form-urlencoded', null]) {
      expect((await send(`{"name":"typed ${String(type).length}"}`, type)).status, String(type)).toBe(200);
    }
    const form = await send('name=a-form', 'application/x-www-form-urlencoded');
    expect(form.status).toBe(400);
    expect(form.body).toMatchObject({ code: 'BAD_REQUEST', message: 'The request body is not valid JSON' });
    // An empty body is the empty input whatever its type: the field it lacks is named.
    const empty = await send('', null);
    expect(empty.status).toBe(400);
    expect(empty.body.issues).toEqual([{ path: ['name'], message: 'required' }]);
  });

  it('is refused compressed, saying so (it is never inflated)', async () => {
    const before = await projectNames();
    const res = await send(gzipSync('{"name":"zipped"}'), 'application/json', { 'content-encoding': 'gzip' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'BAD_REQUEST', issues: [{ path: [], message: 'content-encoding must be identity' }] });
    expect(await projectNames()).toEqual(before);
  });

  it('is refused when an object gives a key twice, naming it', async () => {
    const before = await projectNames();
    const twice = await send('{"name":"first","name":"second"}', 'application/json');
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ code: 'BAD_REQUEST', message: 'Invalid input data: name: given more than once', issues: [{ path: ['name'], message: 'given more than once' }] });
    const escaped = await send('{"name":"first","\\u006eame":"second"}', 'application/json');
    expect(escaped.body.issues).toEqual([{ path: ['name'], message: 'given more than once' }]);
    expect(await projectNames()).toEqual(before);
  });
});
