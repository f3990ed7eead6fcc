// The dashboard's form logic that decides what reaches the API: channel bodies (secrets
// write-only on edit) and connection strings with a password put in.
import { expect, it } from 'vitest';
import { blank, toBody, valuesOf } from '../web/channels.js';
import { withPassword } from '../web/connection.js';

it('sends each channel field in the type its operation takes', () => {
  const values = { ...blank('email'), name: 'mail', smtpServer: 'smtp.example.com', smtpPort: '465', username: 'u', password: 'pw', fromAddress: 'a@example.com', toAddresses: ' b@example.com, c@example.com ,' };
  expect(toBody('email', values, { update: false })).toEqual({
    smtpServer: 'smtp.example.com', smtpPort: 465, username: 'u', password: 'pw', fromAddress: 'a@example.com', toAddresses: ['b@example.com', 'c@example.com'],
  });
  expect(toBody('community', { ...blank('community'), webhookUrl: 'https://x.example/h', decoration: true }, { update: false })).toEqual({ webhookUrl: 'https://x.example/h', decoration: true });
});

it('keeps a stored secret on edit: the form starts without it and an empty one is not sent', () => {
  const record = { kind: 'hook', name: 'ops', channel: '#ops', hasWebhookUrl: true, appDeploy: true, appBuildError: false };
  const values = valuesOf(record);
  expect(values).toMatchObject({ name: 'ops', channel: '#ops', webhookUrl: '', appDeploy: true, appBuildError: false });
  expect(toBody('hook', values, { update: true })).toEqual({ channel: '#ops' });
  expect(toBody('hook', { ...values, webhookUrl: 'https://new.example/h' }, { update: true })).toEqual({ channel: '#ops', webhookUrl: 'https://new.example/h' });
});

it('puts a password after the user of a connection string, encoded', () => {
  expect(withPassword('postgresql://app@shop-db:5432/app', 'p@ss/w:rd')).toBe('postgresql://app:p%40ss%2Fw%3Ard@shop-db:5432/app');
  expect(withPassword('mongodb://app@orders:27017/?replicaSet=rs0', 'x')).toBe('mongodb://app:x@orders:27017/?replicaSet=rs0');
  // No user: nothing to attach it to.
  expect(withPassword('http://orders:8080', 'x')).toBe('http://orders:8080');
});
