// The control plane's logger (the one main.ts makes) never writes a secret, whatever object a
// log call is handed: request inputs, headers, a command's payload, an error with a body.
import { randomBytes } from 'node:crypto';
import { SecretLeakError, SecretWatch } from '@skiff/testing';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

const fresh = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;

function capture() {
  let text = '';
  const log = createLogger({ level: 'trace', base: { service: 'control-plane' } }, { write: (line: string) => void (text += line) });
  return { log, text: () => text };
}

describe('the control plane logger', () => {
  it('redacts the secrets of a request input, its headers and an agent command, and keeps the rest', () => {
    const watch = new SecretWatch();
    const { log, text } = capture();
    watch.source('the control plane log', text);
    const password = watch.secret(fresh('hunter2'));
    const databasePassword = watch.secret(fresh('db-pass'));
    const apiKey = watch.secret(`skf_${fresh('key')}`);
    const envValue = watch.secret(fresh('env-value'));
    const buildSecret = watch.secret(fresh('npm-token'));
    const registryPassword = watch.secret(fresh('registry'));
    const sshKey = watch.secret(fresh('-----BEGIN OPENSSH PRIVATE KEY-----'));
    const token = watch.secret(fresh('invite'));

    const child = log.child({ requestId: 'req_1', operation: 'cache.create' });
    child.info({ input: { name: 'sessions', databasePassword } }, 'request');
    child.info({ password, token }, 'top level');
    child.warn({ headers: { 'x-api-key': apiKey, authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' } }, 'headers');
    child.error(
      {
        command: {
          deployApplication: {
            image: 'registry.example.com/team/api:7',
            env: { DATABASE_URL: envValue },
            registryAuth: { serverAddress: 'registry.example.com', username: 'deployer', password: registryPassword },
            source: { git: { url: 'git@example.com:team/api.git', sshPrivateKey: sshKey }, build: { buildSecrets: { NPM_TOKEN: buildSecret } } },
          },
        },
      },
      'command',
    );

    watch.assertNoLeak();
    const lines = text().trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(4);
    expect(lines[0].input).toEqual({ name: 'sessions', databasePassword: '[redacted]' });
    expect(lines[1]).toMatchObject({ password: '[redacted]', token: '[redacted]', requestId: 'req_1', service: 'control-plane' });
    expect(lines[2].headers).toEqual({ 'x-api-key': '[redacted]', authorization: '[redacted]', 'content-type': 'application/json' });
    expect(lines[3].command.deployApplication).toMatchObject({
      image: 'registry.example.com/team/api:7',
      env: '[redacted]',
      registryAuth: '[redacted]',
    });
  });

  it('is what the secret watch catches without redaction', () => {
    const watch = new SecretWatch();
    const password = watch.secret(fresh('hunter2'));
    expect(() => watch.check(JSON.stringify({ input: { password } }))).toThrow(SecretLeakError);
    expect(() => watch.check(`{"msg":"${JSON.stringify(password + '"').slice(1, -1)}"}`)).toThrow(SecretLeakError);
    expect(() => watch.check(Buffer.from(password).toString('base64'))).toThrow(SecretLeakError);
    expect(() => watch.check('nothing here')).not.toThrow();
  });
});
