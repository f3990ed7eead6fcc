// What the logs of both apps never show (docs/security.md, "Logs"). The loggers' formatters
// replace the value of every field below, at the top of a log object and up to four objects
// deep (`input.password`, `command.deployApplication.source.git.sshPrivateKey`…), with
// `[redacted]`. The names come from the contracts' write-only fields (those answered as
// `has<Name>`), the other secret inputs (env, build arguments, tokens, keys) and the agent
// protocol's fields commented as secrets (proto/skiff/agent/v1), in the camelCase of the
// generated code. A whole map (env, buildArgs, buildSecrets) is replaced, keys included.
//
// Redaction is by field name only: a secret inside a message string, or under a name not
// listed here, is not caught. Code never logs request bodies, commands or errors' payloads
// whole; this list is the net under that rule, not a licence to break it.

/** Field names whose values are secrets wherever they appear in a log object. */
export const SECRET_LOG_FIELDS: readonly string[] = [
  // Passwords, tokens and keys of the contracts (write-only: `has<Name>` in answers).
  'password',
  'databasePassword',
  'databaseRootPassword',
  'rootPassword',
  'appPassword',
  'token',
  'accessToken',
  'refreshToken',
  'apiToken',
  'httpPassword',
  'appToken',
  'botToken',
  'apiKey',
  'key',
  'secret',
  'secretKey',
  'clientSecret',
  'webhookSecret',
  'webhookUrl',
  'privateKey',
  'sshPrivateKey',
  'accessKey',
  'secretAccessKey',
  'encryptionKey',
  'encryptionPassphrase',
  'passphrase',
  // Environment and build inputs: values may be secrets.
  'env',
  'previewEnv',
  'envFile',
  'buildArgs',
  'previewBuildArgs',
  'buildSecrets',
  'previewBuildSecrets',
  // The agent protocol (command.proto, reports.proto) and the agents' identities.
  'registryAuth',
  'files',
  'configFiles',
  'content',
  'inputJson',
  'joinToken',
  'serverCredential',
  'credential',
  'natsCredentials',
  'creds',
  'accountSeed',
  'seed',
  'jwt',
  // HTTP.
  'authorization',
  'cookie',
  '"x-api-key"',
  '"set-cookie"',
];

/** How deep below the top of a log object a listed field is still found. */
const DEPTH = 4;

/** What replaces a redacted value. */
export const REDACTED = '[redacted]';

const SECRET_NAMES = new Set(SECRET_LOG_FIELDS.map((field) => field.replaceAll('"', '').toLowerCase()));

const isPlainObject = (value: object): value is Record<string, unknown> => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * The log object with the value of every listed field (any case), at the top and up to four
 * objects or arrays deep, replaced by `[redacted]`. Copies only what it changes; class
 * instances (errors, buffers, dates) are left to pino's serializers. A walk over the object's
 * own keys costs about a microsecond a line, where pino's wildcard `redact` paths for this
 * list cost over a hundred.
 */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (depth > DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    value.forEach((item, i) => {
      const next = redactSecrets(item, depth + 1);
      if (next !== item) (copy ??= [...value])[i] = next;
    });
    return (copy ?? value) as T;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | null = null;
  for (const key of Object.keys(value)) {
    const item = value[key];
    const next = SECRET_NAMES.has(key.toLowerCase()) ? REDACTED : redactSecrets(item, depth + 1);
    if (next !== item) (copy ??= { ...value })[key] = next;
  }
  return (copy ?? value) as T;
}

/** The pino options every logger of the control plane and the agent takes: its log objects and child bindings redacted. */
export const logRedaction = () => ({
  formatters: {
    log: (object: Record<string, unknown>) => redactSecrets(object),
    bindings: (bindings: Record<string, unknown>) => redactSecrets(bindings),
  },
});
