// What the logs of both apps never show (docs/security.md, "Logs"). Pino's `redact` replaces
// the value of every field below, at the top of a log object and up to four objects deep
// (`input.password`, `command.deployApplication.source.git.sshPrivateKey`…), with
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
  'appPassword',
  'token',
  'accessToken',
  'refreshToken',
  'apiToken',
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

/** The pino `redact.paths` of SECRET_LOG_FIELDS: `name`, `*.name` … `*.*.*.*.name` (`["x-api-key"]` for a name with a dash). */
export const LOG_REDACT_PATHS: readonly string[] = SECRET_LOG_FIELDS.flatMap((field) => {
  const quoted = field.startsWith('"');
  return Array.from({ length: DEPTH + 1 }, (_, depth) => {
    const prefix = Array.from({ length: depth }, () => '*').join('.');
    if (quoted) return `${prefix}[${field}]`;
    return prefix ? `${prefix}.${field}` : field;
  });
});

/** What replaces a redacted value. */
export const REDACTED = '[redacted]';

/** The `redact` option of every pino logger of the control plane and the agent. */
export const logRedaction = (): { paths: string[]; censor: string } => ({ paths: [...LOG_REDACT_PATHS], censor: REDACTED });
