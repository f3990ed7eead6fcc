// The dashboard's form logic that decides what reaches the API: channel bodies (secrets
// write-only on edit) and connection strings with a password put in.
import { expect, it } from 'vitest';
import { blank, toBody, valuesOf } from '../web/channels.js';
import { withPassword } from '../web/connection.js';
import { apiError, fieldsOf } from '../web/errors.js';
import { describeCron } from '../web/cron.js';
import { blankDatabase, blankDomain, blankSchedule, databaseBody, domainBody, scheduleBody } from '../web/service-forms.js';

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

it('names each field a BAD_REQUEST refused, for the form to show next to its input', () => {
  const err = apiError({ code: 'BAD_REQUEST', message: 'Invalid input data: host', issues: [{ path: ['host'], message: 'not a DNS name' }, { path: ['port'], message: 'at most 65535' }] }, '400 Bad Request');
  expect(fieldsOf(err)).toEqual({ host: 'not a DNS name', port: 'at most 65535' });
  expect(err.message).toBe('Invalid input data: host — host: not a DNS name — port: at most 65535');
  expect(fieldsOf(new Error('network'))).toEqual({});
});

it('sends a domain with its port as a number and no certificate without HTTPS', () => {
  expect(domainBody('app1', { host: ' shop.example.com ', path: '/', port: '8080', https: true, certificateType: 'acme' }))
    .toEqual({ applicationId: 'app1', host: 'shop.example.com', path: '/', port: 8080, https: true, certificateType: 'acme' });
  expect(domainBody('app1', { host: 'a.example.com', path: '', port: '', https: false, certificateType: 'acme' }))
    .toMatchObject({ path: null, port: null, https: false, certificateType: 'none' });
  // Not a number: sent as typed, so the API's refusal names the field.
  expect(domainBody('app1', { ...blankDomain(), host: 'a.example.com', port: 'eighty' }).port).toBe('eighty');
});

it('leaves a database password out when empty, so that the API generates it', () => {
  expect(databaseBody('env1', { ...blankDatabase(), name: 'orders' })).toEqual({ name: 'orders', environmentId: 'env1' });
  expect(databaseBody('env1', { engine: 'dbB', name: 'm', containerImage: 'mariadb:11.4', databaseName: 'shop', databaseUser: 'shop', databasePassword: 'pw' }))
    .toEqual({ name: 'm', environmentId: 'env1', containerImage: 'mariadb:11.4', databaseName: 'shop', databaseUser: 'shop', databasePassword: 'pw' });
  expect(databaseBody('env1', { ...blankDatabase(), engine: 'dbE', name: 'l', databaseName: 'x', databaseUser: 'y' })).toEqual({ name: 'l', environmentId: 'env1' });
});

it('sends a backup schedule with "keep" as a number, or null to keep every file', () => {
  expect(scheduleBody({ destinationId: 'd1', schedule: ' 0 3 * * * ', prefix: 'nightly/', keepLatestCount: '7', enabled: false }))
    .toEqual({ destinationId: 'd1', schedule: '0 3 * * *', prefix: 'nightly/', keepLatestCount: 7, enabled: false });
  expect(scheduleBody(blankSchedule()).keepLatestCount).toBeNull();
});

it('says a cron schedule in words', () => {
  expect(describeCron('0 3 * * *')).toBe('Every day at 03:00 UTC');
  expect(describeCron('*/15 * * * *')).toBe('Every 15 minutes');
  expect(describeCron('30 * * * *')).toBe('Every hour at minute 30');
  expect(describeCron('0 4 * * 0')).toBe('Every Sunday at 04:00 UTC');
  expect(describeCron('15 2 1 * *')).toBe('On day 1 of every month at 02:15 UTC');
  expect(describeCron('@daily')).toBe('Every day at 00:00 UTC');
  expect(describeCron('0 3 * *')).toMatch(/^Five fields/);
  expect(describeCron('0 1-5 * * *')).toBe('Minute 0, hour 1-5, day-of-month *, month *, day-of-week * (UTC)');
});
