/**
 * A dump's or restore's failure as it may leave the agent (it becomes the restore's log and
 * the backup run's error): the engine tool's stderr and S3's messages can echo a connection
 * string or a value of the container's environment. Scrubbed as build logs are (build-log.ts):
 * a line holding a secret is replaced whole, and credentials in URLs by `***`.
 */
import type { S3Object } from '@skiff/proto';
import { scrubText } from '../build/build-log.js';

/** Variables of a database container whose values are secrets (the official images' `*_PASSWORD`, keys, tokens, libsql-server's SQLD_HTTP_AUTH). */
const SECRET_VARIABLE = /PASS|SECRET|KEY|TOKEN|CREDENTIAL|AUTH/i;

export function secretValuesOfEnv(env: readonly string[]): string[] {
  return env.flatMap((entry) => {
    const eq = entry.indexOf('=');
    return eq > 0 && SECRET_VARIABLE.test(entry.slice(0, eq)) && entry.length > eq + 1 ? [entry.slice(eq + 1)] : [];
  });
}

export function scrubToolReason(reason: string, object: S3Object | undefined, containerSecrets: readonly string[]): string {
  return scrubText(reason, [object?.accessKey ?? '', object?.secretKey ?? '', object?.passphrase ?? '', ...containerSecrets]);
}
