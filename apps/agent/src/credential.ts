/**
 * The agent's server credential, from the environment or from its file. The file must be
 * private to the agent's user (no group or other permissions): a readable credential is
 * refused rather than used. The value is never logged.
 */
import { readFile, stat } from 'node:fs/promises';
import type { AgentConfig } from './config.js';

export class CredentialError extends Error {
  override name = 'CredentialError';
}

export async function readCredential(source: AgentConfig['credential']): Promise<string> {
  if ('value' in source) return source.value;
  let mode: number;
  try {
    mode = (await stat(source.file)).mode;
  } catch (err) {
    throw new CredentialError(`cannot read the credential file ${source.file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new CredentialError(`the credential file ${source.file} is readable by others (mode ${(mode & 0o777).toString(8)}); make it 0600`);
  }
  const value = (await readFile(source.file, 'utf8')).trim();
  if (value === '') throw new CredentialError(`the credential file ${source.file} is empty`);
  return value;
}
