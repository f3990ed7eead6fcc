// Where the agent connects for a dump or a restore: the endpoint's name is resolved again on
// the agent's network, and a name that now points at link-local or metadata addresses is
// refused before any request (which would carry the bucket's keys) is sent.
import { PassThrough } from 'node:stream';
import { OutboundRefused } from '@skiff/outbound';
import type { S3Object } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { downloadObject, removeObject, uploadObject } from './s3-object.js';

const object = (endpoint: string): S3Object => ({ endpoint, region: 'us-east-1', bucket: 'latest', key: 'meta-data/iam/security-credentials/role', accessKey: 'ak', secretKey: 'sk', passphrase: '' });

describe('the agent’s S3 connections', () => {
  it('refuses an endpoint whose name resolves to metadata or link-local addresses, for every call', async () => {
    for (const addresses of [['169.254.169.254'], ['203.0.113.7', 'fe80::1'], ['100.100.100.200']]) {
      const asked: string[] = [];
      const resolver = async (host: string) => {
        asked.push(host);
        return addresses;
      };
      const o = object('http://s3.rebound.example:9000');
      await expect(downloadObject(o, resolver)).rejects.toBeInstanceOf(OutboundRefused);
      await expect(removeObject(o, resolver)).rejects.toBeInstanceOf(OutboundRefused);
      await expect(uploadObject(o, new PassThrough(), new AbortController().signal, resolver)).rejects.toBeInstanceOf(OutboundRefused);
      expect(asked).toEqual(['s3.rebound.example', 's3.rebound.example', 's3.rebound.example']);
    }
    // A metadata literal needs no resolver to be refused.
    await expect(downloadObject(object('http://169.254.169.254'))).rejects.toBeInstanceOf(OutboundRefused);
  });
});
