/**
 * Records the secrets a test uses and fails when one shows up in captured output: the
 * control plane's log, the agent's output, deployment logs, or any text handed to `check`.
 *
 *   const watch = new SecretWatch();
 *   watch.source('control plane log', () => logText);
 *   const pw = watch.secret(`hunter2-${randomBytes(6).toString('hex')}`);
 *   … use pw …
 *   watch.assertNoLeak();
 *
 * A secret is looked for as it is, JSON-escaped, and base64-encoded on its own.
 */
export class SecretLeakError extends Error {
  /** `line` is the line it is in, every watched secret in it masked. */
  constructor(readonly where: string, secret: string, readonly line: string) {
    super(`a secret (${mask(secret)}) appears in ${where}: ${line.slice(0, 500)}`);
    this.name = 'SecretLeakError';
  }
}

/** Shorter values match too much text to mean anything. */
const MIN_SECRET_LENGTH = 6;

const mask = (secret: string) => `${secret.slice(0, 3)}…(${secret.length} chars)`;

export class SecretWatch {
  private readonly secrets = new Set<string>();
  private readonly sources = new Map<string, () => string>();

  /** Registers a secret the test uses; answers it, so `const pw = watch.secret('…')`. */
  secret<T extends string>(value: T): T {
    if (value.length < MIN_SECRET_LENGTH) throw new Error(`a watched secret needs ${MIN_SECRET_LENGTH} characters at least`);
    this.secrets.add(value);
    return value;
  }

  /** The secrets registered so far. */
  get watched(): readonly string[] {
    return [...this.secrets];
  }

  /** Output that assertNoLeak scans, read when it runs (e.g. a log buffer); the name says where it is. */
  source(name: string, read: () => string): this {
    this.sources.set(name, read);
    return this;
  }

  /** Throws SecretLeakError when a registered secret is in one of the texts. */
  check(...texts: (string | { where: string; text: string })[]): void {
    texts.forEach((entry, i) => {
      const { where, text } = typeof entry === 'string' ? { where: `text ${i + 1}`, text: entry } : entry;
      this.scan(where, text);
    });
  }

  /** Checks every source. */
  assertNoLeak(): void {
    for (const [where, read] of this.sources) this.scan(where, read());
  }

  private scan(where: string, text: string): void {
    if (!text) return;
    for (const secret of this.secrets) {
      for (const form of formsOf(secret)) {
        const at = text.indexOf(form);
        if (at < 0) continue;
        const start = text.lastIndexOf('\n', at) + 1;
        const end = text.indexOf('\n', at);
        let line = text.slice(start, end < 0 ? undefined : end);
        for (const other of this.secrets) for (const f of formsOf(other)) line = line.replaceAll(f, mask(other));
        throw new SecretLeakError(where, secret, line);
      }
    }
  }
}

function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const base64 = Buffer.from(secret).toString('base64').replace(/=+$/, '');
  return [...new Set([secret, json, base64])];
}
