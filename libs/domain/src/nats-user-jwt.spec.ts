import { parseCreds } from '@nats-io/jwt';
import { createAccount, createOperator } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { agentNatsPermissions } from './agent-channel.js';
import { agentNatsCreds, natsAccountKeyPair } from './nats-user-jwt.js';

describe('agentNatsCreds', () => {
  it("signs a user for the server's agent with its permissions, valid until the given second", async () => {
    const account = createAccount();
    const creds = await agentNatsCreds(account, 'srv-1', new Date('2030-01-02T03:04:05.678Z'));
    const { uc } = await parseCreds(new TextEncoder().encode(creds));
    expect(uc.name).toBe('agent-srv-1');
    expect(uc.iss).toBe(account.getPublicKey());
    expect(uc.sub.startsWith('U')).toBe(true);
    expect(uc.exp).toBe(Math.floor(Date.parse('2030-01-02T03:04:05Z') / 1000));
    const permissions = agentNatsPermissions('srv-1');
    expect(uc.nats.pub?.allow).toEqual(permissions.pub.allow);
    expect(uc.nats.sub?.allow).toEqual(permissions.sub.allow);
  });

  it('makes a new user each time', async () => {
    const account = createAccount();
    const expiry = new Date(Date.now() + 60_000);
    const [a, b] = await Promise.all([agentNatsCreds(account, 'srv-1', expiry), agentNatsCreds(account, 'srv-1', expiry)]);
    const [ua, ub] = await Promise.all([a, b].map((c) => parseCreds(new TextEncoder().encode(c))));
    expect(ua.uc.sub).not.toBe(ub.uc.sub);
  });
});

describe('natsAccountKeyPair', () => {
  it("reads an account's seed, white space around it ignored", () => {
    const account = createAccount();
    const seed = new TextDecoder().decode(account.getSeed());
    expect(natsAccountKeyPair(`${seed}\n`).getPublicKey()).toBe(account.getPublicKey());
  });

  it("refuses a seed that is not an account's", () => {
    const seed = new TextDecoder().decode(createOperator().getSeed());
    expect(() => natsAccountKeyPair(seed)).toThrow('not an account key');
  });
});
