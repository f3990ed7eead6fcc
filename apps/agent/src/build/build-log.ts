/**
 * A build's output as deployment log lines: batched (every `intervalMs` or `maxLines`
 * lines, whichever comes first) so a chatty build does not send one report per line, and
 * scrubbed before anything leaves the agent:
 * - a line that contains a build secret (or one line of a multi-line secret) is replaced
 *   as a whole by a notice, so no part of it is shown;
 * - credentials in URLs (`scheme://user:pass@host`) are replaced by `***`.
 */
export interface BuildLogOptions {
  /** Values that must never be shown (build secrets, passwords of clone URLs). */
  secrets?: readonly string[];
  intervalMs?: number;
  maxLines?: number;
}

export const HIDDEN_LINE = '[a line of the build output was hidden: it contains a secret]';

export class BuildLog {
  private buffer: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();
  private failure: unknown = null;
  private readonly needles: string[];
  private readonly intervalMs: number;
  private readonly maxLines: number;

  constructor(
    private readonly sink: (...lines: string[]) => Promise<void>,
    options: BuildLogOptions = {},
  ) {
    this.needles = secretNeedles(options.secrets ?? []);
    this.intervalMs = options.intervalMs ?? 200;
    this.maxLines = options.maxLines ?? 50;
  }

  /** More values to hide from now on. */
  addSecrets(values: readonly string[]): void {
    this.needles.push(...secretNeedles(values));
  }

  /** The line as it may be shown. */
  scrub(line: string): string {
    return scrubLine(line, this.needles);
  }

  /** Queues one line (scrubbed). */
  line(text: string): void {
    this.buffer.push(this.scrub(text));
    if (this.buffer.length >= this.maxLines) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  /** Sends what is queued, after what was sent before. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const lines = this.buffer;
    this.buffer = [];
    if (lines.length > 0) {
      this.sending = this.sending.then(() =>
        this.sink(...lines).catch((err: unknown) => {
          this.failure ??= err;
        }),
      );
    }
    return this.sending;
  }

  /** Sends the rest; rejects with the first failure of the sink. */
  async close(): Promise<void> {
    await this.flush();
    if (this.failure) throw this.failure;
  }
}

/** What to look for: each secret, and each line of a multi-line one (4+ characters). */
/** `text` as it may be shown when `secrets` must not be, line by line, as a build log shows it. */
export function scrubText(text: string, secrets: readonly string[]): string {
  const needles = secretNeedles(secrets);
  return text
    .split('\n')
    .map((line) => scrubLine(line, needles))
    .join('\n');
}

function scrubLine(line: string, needles: readonly string[]): string {
  if (needles.some((n) => line.includes(n))) return HIDDEN_LINE;
  return redactUrlCredentials(line);
}

function secretNeedles(values: readonly string[]): string[] {
  const needles: string[] = [];
  for (const value of values) {
    if (value === '') continue;
    const lines = value.split(/\r?\n/).map((l) => l.trim());
    if (lines.length === 1) needles.push(value);
    else needles.push(...lines.filter((l) => l.length >= 4));
  }
  return needles;
}

/**
 * The user part of a URL: after `://`, up to `@`. Not anchored on the scheme before it: a
 * scheme pattern retried from each of its characters is quadratic (tools/redos.spec.ts), and
 * the scheme is kept as it is anyway.
 */
const URL_CREDENTIALS = /:\/\/[^\s/@'"]+@/g;

/** `https://user:token@host/x` → `https://***@host/x`. */
export function redactUrlCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, '://***@');
}
