/** Why the renderer refuses its input; the message names the domain or option, never a secret. */
export class CaddyConfigError extends Error {
  override name = 'CaddyConfigError';
}
