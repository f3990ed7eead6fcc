import { z } from 'zod';
import { NonEmpty, Uri } from '../primitives.js';

/**
 * An S3 bucket name: 3 to 63 characters, lower-case letters, digits, dots and hyphens,
 * starting and ending with a letter or digit; no two adjacent dots, not shaped like an IPv4
 * address, not starting with `xn--` or `sthree-`, not ending with `-s3alias` or `--ol-s3`.
 */
export const BucketName = z
  .string()
  .min(3)
  .max(63)
  .regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, 'lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit')
  .refine((b) => !b.includes('..'), 'must not contain two adjacent dots')
  .refine((b) => !/^\d{1,3}(\.\d{1,3}){3}$/.test(b), 'must not be shaped like an IP address')
  .refine((b) => !/^(xn--|sthree-)/.test(b) && !/(-s3alias|--ol-s3)$/.test(b), 'uses a prefix or suffix S3 reserves')
  .describe('S3 bucket naming rules: 3 to 63 characters of a-z, 0-9, . and -');

/** The settings of a destination, as create takes them. */
export const DestinationFields = z.object({
  name: NonEmpty,
  endpoint: Uri.describe('http(s) URL of the S3-compatible service, e.g. https://s3.eu-west-1.amazonaws.com'),
  region: NonEmpty.describe('the region requests are signed for, e.g. us-east-1'),
  bucket: BucketName,
  accessKey: NonEmpty.describe('access key id; stored encrypted, shown in responses'),
  secretKey: NonEmpty.describe('secret access key; stored encrypted, write-only (responses show hasSecretKey)'),
  encryptionPassphrase: z
    .string()
    .min(16)
    .max(1024)
    .nullable()
    .optional()
    .describe(
      'When set, every archive written here is encrypted with it (age format, scrypt passphrase; the key gets `.age`), ' +
        'decryptable with `age -d`; at least 16 characters; stored encrypted, write-only (responses show hasEncryptionPassphrase); null removes it',
    ),
});

export const destinationExample = {
  name: 'offsite',
  endpoint: 'https://s3.eu-west-1.amazonaws.com',
  region: 'eu-west-1',
  bucket: 'acme-backups',
  accessKey: 'AKIAEXAMPLE',
  secretKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
