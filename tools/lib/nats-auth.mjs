#!/usr/bin/env node
// Sets up NATS in operator mode for one Skiff data directory, once: an operator, the
// SKIFF account (JetStream enabled) and the system account, each with its seed in a 0600
// file, an `auth.conf` for nats-server to include, and the control plane's own user
// credentials (`control-plane.creds`, no limits). Agents get their own narrow credentials
// from the control plane when they register (apps/control-plane/src/agents/nats-credentials.ts).
// Usage: node tools/lib/nats-auth.mjs <dir>    (files that exist are kept as they are)
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeAccount, encodeOperator, encodeUser, fmtCreds } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, fromSeed } from '@nats-io/nkeys';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: nats-auth.mjs <dir>');
  process.exit(2);
}
mkdirSync(dir, { recursive: true, mode: 0o700 });
const secret = (name, text) => writeFileSync(join(dir, name), text, { mode: 0o600 });

const keyPair = (name, create) => {
  const file = join(dir, name);
  if (existsSync(file)) return fromSeed(new TextEncoder().encode(readFileSync(file, 'utf8').trim()));
  const kp = create();
  secret(name, new TextDecoder().decode(kp.getSeed()));
  return kp;
};

const operator = keyPair('operator.nk', createOperator);
const account = keyPair('account.nk', createAccount);
const system = keyPair('system.nk', createAccount);

const unlimited = { conn: -1, subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, leaf: -1 };
const operatorJwt = await encodeOperator('skiff', operator, { system_account: system.getPublicKey() });
const accountJwt = await encodeAccount(
  'SKIFF',
  account,
  { limits: { ...unlimited, mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 } },
  { signer: operator },
);
const systemJwt = await encodeAccount('SYS', system, { limits: unlimited }, { signer: operator });
writeFileSync(
  join(dir, 'auth.conf'),
  [
    `operator: ${operatorJwt}`,
    `system_account: ${system.getPublicKey()}`,
    'resolver: MEMORY',
    'resolver_preload: {',
    `  ${account.getPublicKey()}: ${accountJwt}`,
    `  ${system.getPublicKey()}: ${systemJwt}`,
    '}',
    '',
  ].join('\n'),
  { mode: 0o600 },
);

if (!existsSync(join(dir, 'control-plane.creds'))) {
  const user = createUser();
  const jwt = await encodeUser('control-plane', user, account);
  secret('control-plane.creds', new TextDecoder().decode(fmtCreds(jwt, user)));
}
