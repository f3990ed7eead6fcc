/**
 * Container image references as Docker's distribution/reference grammar defines them:
 * `[host[:port]/]path[:tag][@algorithm:hex]`, the path made of lower-case components.
 * Checked before an image name ever reaches a Docker API call or a command line.
 */
const HOST_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = `(?:${HOST_COMPONENT}(?:\\.${HOST_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';

const HOST_RE = new RegExp(`^${HOST}$`);
const PATH_RE = new RegExp(`^${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const TAG_RE = new RegExp(`^${TAG}$`);
const DIGEST_RE = new RegExp(`^${DIGEST}$`);

/** The longest image name (host and path) Docker accepts. */
const NAME_MAX = 255;

export interface ImageReference {
  /** The registry host (with port), or null for Docker Hub. */
  host: string | null;
  path: string;
  tag: string | null;
  digest: string | null;
}

/** The parts of an image reference, or null when it is not one. */
export function parseImageReference(ref: string): ImageReference | null {
  let rest = ref;
  let digest: string | null = null;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST_RE.test(digest)) return null;
  }
  let tag: string | null = null;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG_RE.test(tag)) return null;
  }
  if (rest.length === 0 || rest.length > NAME_MAX) return null;
  let host: string | null = null;
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    const first = rest.slice(0, slash);
    // As Docker decides: the first component is a registry host when it looks like one.
    if (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase()) {
      host = first;
      rest = rest.slice(slash + 1);
      if (!HOST_RE.test(host)) return null;
    }
  }
  if (!PATH_RE.test(rest)) return null;
  return { host, path: rest, tag, digest };
}

export const isImageReference = (ref: string) => parseImageReference(ref) !== null;
