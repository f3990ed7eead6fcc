import { createPrivateKey } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandSigner } from '@skiff/domain';

export const COMMAND_SIGNING_KEY_FILE = 'command-signing.key';
/** The public half, as SKIFF_COMMAND_KEY carries it: what tools/up gives the local agent. */
export const COMMAND_PUBLIC_KEY_FILE = 'command-key.pub';

/**
 * The control plane's command key (Ed25519), which signs every command and control request
 * (libs/domain command-signature.ts): `<dataDir>/command-signing.key` (PKCS#8 PEM, 0600),
 * created on first boot, with its public key beside it in `command-key.pub`. Agents pin the
 * public key at join: replacing this file means every agent must join again.
 */
export function loadCommandSigningKey(dataDir: string): CommandSigner {
  const file = join(dataDir, COMMAND_SIGNING_KEY_FILE);
  if (!existsSync(file)) {
    try {
      writeFileSync(file, CommandSigner.generate().exportPrivateKey(), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another process created it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  let signer: CommandSigner;
  try {
    signer = new CommandSigner(createPrivateKey(readFileSync(file, 'utf8')));
  } catch (err) {
    throw new Error(`${file} holds no Ed25519 private key (${(err as Error).message})`);
  }
  writeFileSync(join(dataDir, COMMAND_PUBLIC_KEY_FILE), signer.publicKey + '\n', { mode: 0o644 });
  return signer;
}
