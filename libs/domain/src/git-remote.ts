/**
 * Which git repositories and branches the platform clones: checked where a plain git source
 * is saved (the control plane) and again before `git clone` runs (the agent), since git is
 * given them as arguments.
 */
import { outboundHostProblem } from './outbound-url.js';

/** `user@host:path`, git's scp-like syntax for SSH (no `//` after the colon: that is a URL). */
const SCP_LIKE = /^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+):(?!\/\/)[A-Za-z0-9._~/-]+$/;
const URL_PROTOCOLS = new Set(['http:', 'https:', 'ssh:', 'git:']);

/**
 * Why git must not be given this repository URL, or null when it may: only http(s), ssh, git
 * and scp-like `user@host:path` URLs; no leading `-` (an option), no whitespace, no
 * `<transport>::` remote helpers (`ext::` runs commands), no local paths or `file://`, and
 * no link-local or cloud-metadata host (`outboundHostProblem`). Credentials in an http(s)
 * URL are allowed (a token is a common way to clone a private repository).
 */
export function refuseGitUrl(url: string): string | null {
  if (url === '') return 'the git URL is empty';
  if (url.startsWith('-')) return 'the git URL must not start with "-"';
  if (/\s/.test(url)) return 'the git URL must not contain whitespace';
  if (/^[A-Za-z0-9+.-]+::/.test(url)) return 'remote helper URLs (<transport>::…) are not allowed';
  const scp = SCP_LIKE.exec(url);
  if (scp) return hostRefusal(scp[1]!);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the git URL must be an http(s), ssh or git URL, or user@host:path';
  }
  if (!URL_PROTOCOLS.has(parsed.protocol)) return `the ${parsed.protocol.replace(/:$/, '')} transport is not allowed (use http(s), ssh or git)`;
  if (parsed.hostname === '') return 'the git URL names no host';
  return hostRefusal(parsed.hostname);
}

/** The host of an scp-like git URL (`user@host:path`), or null when the URL is not one. */
export function scpLikeHost(url: string): string | null {
  return SCP_LIKE.exec(url)?.[1] ?? null;
}

function hostRefusal(host: string): string | null {
  const problem = outboundHostProblem(host);
  return problem ? `the git URL's host is refused: ${problem}` : null;
}

/**
 * Why git must not be given this branch, or null when it may: no leading `-` (an option), and
 * a valid ref name (no whitespace, control characters, `~ ^ : ? * [ \`, `..` or `@{`).
 */
export function refuseGitBranch(branch: string): string | null {
  if (branch === '') return 'the branch is empty';
  if (branch.startsWith('-')) return 'the branch must not start with "-"';
  if (/[\s~^:?*[\\\x00-\x1f\x7f]/.test(branch) || branch.includes('..') || branch.includes('@{')) {
    return `"${branch}" is not a valid branch name`;
  }
  return null;
}
