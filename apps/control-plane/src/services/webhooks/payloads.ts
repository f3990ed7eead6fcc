import { trimChar } from '@skiff/domain';
import type { ForgeSource } from './signatures.js';

/** A pull/merge request event, as every forge's payload is read. */
export interface PullRequestEvent {
  action: 'opened' | 'updated' | 'closed' | 'other';
  number: string;
  id: string;
  title: string;
  url: string;
  /** The branch the request would merge (where the preview is built from). */
  headBranch: string;
  headCommit: string | null;
  /** The head branch lives in another repository than the base (a fork); null when the payload does not say. */
  fromFork: boolean | null;
  /** The head repository's clone address (https or http, without credentials); null when the payload carries none usable. */
  headCloneUrl: string | null;
  /** Who opened it, as the forge's permission API names users (login; GitLab user id; Bitbucket account uuid). */
  author: string | null;
  /** Its labels' names; null when the forge sends none (Bitbucket has no labels). */
  labels: string[] | null;
}

/** What the receiver needs from any forge's delivery. */
export interface ForgeEvent {
  /** The event as the forge names it (`push`, `Push Hook`, `repo:push`, `pull_request`…). */
  event: string;
  kind: 'push' | 'tag' | 'pull_request' | 'ping' | 'other';
  /** `owner/name` (GitLab: the path with namespace; Bitbucket: `workspace/slug`). */
  repository: string | null;
  /** GitLab's numeric project id. */
  projectId: string | null;
  /** GitHub App installation. */
  installationId: string | null;
  /** Branch or tag name, without `refs/heads/` or `refs/tags/`. */
  ref: string | null;
  commit: string | null;
  /** The branch or tag was deleted (nothing to deploy). */
  deleted: boolean;
  /** Files the pushed commits added, modified or removed; null when the forge does not list them. */
  changedFiles: string[] | null;
  pullRequest: PullRequestEvent | null;
}

type Json = Record<string, unknown>;

const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
/** A non-empty string or number as text, cut at 1024 characters (refs, titles and URLs stay bounded). */
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v.slice(0, 1024) : typeof v === 'number' ? String(v) : null);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** The `key` of each object of a list (label names); null when it is not a list. */
const names = (v: unknown, key: string): string[] | null =>
  Array.isArray(v) ? v.map((x) => str(obj(x)[key])).filter((x): x is string => x !== null).slice(0, 100) : null;

/** Most files read from one delivery (GitHub lists at most 20 commits; each may list many files). */
export const MAX_CHANGED_FILES = 5000;

/** `refs/heads/x` → push of branch x; `refs/tags/v1` → tag v1. */
function splitRef(ref: string | null): { kind: 'push' | 'tag'; name: string } | null {
  if (!ref) return null;
  if (ref.startsWith('refs/heads/')) return { kind: 'push', name: ref.slice('refs/heads/'.length) };
  if (ref.startsWith('refs/tags/')) return { kind: 'tag', name: ref.slice('refs/tags/'.length) };
  return null;
}

/** Added, modified and removed files of GitHub-, Gitea- and GitLab-shaped `commits`; null when absent. */
function commitFiles(body: Json): string[] | null {
  if (!Array.isArray(body.commits)) return null;
  const files = new Set<string>();
  for (const commit of body.commits) {
    for (const field of ['added', 'modified', 'removed']) {
      for (const f of list(obj(commit)[field])) {
        if (typeof f === 'string' && files.size < MAX_CHANGED_FILES) files.add(f);
      }
    }
  }
  return [...files];
}

const blank = (event: string): ForgeEvent => ({
  event,
  kind: 'other',
  repository: null,
  projectId: null,
  installationId: null,
  ref: null,
  commit: null,
  deleted: false,
  changedFiles: null,
  pullRequest: null,
});

const ZERO_SHA = /^0+$/;

/** An http(s) clone address without credentials, query or fragment; null for anything else. */
export function cloneAddress(v: unknown): string | null {
  const text = str(v);
  if (!text) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || url.search || url.hash || !url.hostname) return null;
  return url.href;
}

/** Whether two repository names differ (a fork), when both are known. */
const differs = (head: string | null, base: string | null): boolean | null => (head && base ? head.toLowerCase() !== base.toLowerCase() : null);

/** A GitHub- or Gitea-shaped push (both send `ref`, `after`, `commits[].added…`). */
function refPush(e: ForgeEvent, body: Json): ForgeEvent {
  const ref = splitRef(str(body.ref));
  if (!ref) return e;
  const after = str(body.after);
  return {
    ...e,
    kind: ref.kind,
    ref: ref.name,
    commit: after,
    deleted: body.deleted === true || (after !== null && ZERO_SHA.test(after)),
    changedFiles: commitFiles(body),
  };
}

function githubAction(action: string | null): PullRequestEvent['action'] {
  if (action === 'opened' || action === 'reopened') return 'opened';
  if (action === 'synchronize' || action === 'synchronized' || action === 'edited') return 'updated';
  if (action === 'closed') return 'closed';
  return 'other';
}

function githubLike(event: string, body: Json): ForgeEvent {
  const e: ForgeEvent = { ...blank(event), repository: str(obj(body.repository).full_name), installationId: str(obj(body.installation).id) };
  if (event === 'ping') return { ...e, kind: 'ping' };
  if (event === 'push' || event === 'create') return refPush(e, body);
  if (event === 'pull_request') {
    const pr = obj(body.pull_request);
    const head = obj(pr.head);
    return {
      ...e,
      kind: 'pull_request',
      pullRequest: {
        action: githubAction(str(body.action)),
        number: str(pr.number) ?? str(body.number) ?? '',
        id: str(pr.id) ?? '',
        title: str(pr.title) ?? '',
        url: str(pr.html_url) ?? '',
        headBranch: str(head.ref) ?? '',
        headCommit: str(head.sha),
        fromFork: differs(str(obj(head.repo).full_name), e.repository),
        headCloneUrl: cloneAddress(obj(head.repo).clone_url),
        author: str(obj(pr.user).login),
        labels: names(pr.labels, 'name'),
      },
    };
  }
  return e;
}

function gitlabAction(action: string | null): PullRequestEvent['action'] {
  if (action === 'open' || action === 'reopen') return 'opened';
  if (action === 'update') return 'updated';
  if (action === 'close' || action === 'merge') return 'closed';
  return 'other';
}

function gitlab(event: string, body: Json): ForgeEvent {
  const project = obj(body.project);
  const e: ForgeEvent = { ...blank(event), repository: str(project.path_with_namespace), projectId: str(project.id ?? body.project_id) };
  const kind = str(body.object_kind);
  if (kind === 'push' || kind === 'tag_push') {
    const pushed = refPush(e, body);
    return { ...pushed, commit: str(body.checkout_sha) ?? pushed.commit };
  }
  if (kind === 'merge_request') {
    const mr = obj(body.object_attributes);
    return {
      ...e,
      kind: 'pull_request',
      pullRequest: {
        action: gitlabAction(str(mr.action)),
        number: str(mr.iid) ?? '',
        id: str(mr.id) ?? '',
        title: str(mr.title) ?? '',
        url: str(mr.url) ?? '',
        headBranch: str(mr.source_branch) ?? '',
        headCommit: str(obj(mr.last_commit).id),
        fromFork: differs(str(mr.source_project_id), str(mr.target_project_id)),
        headCloneUrl: cloneAddress(obj(mr.source).git_http_url),
        author: str(mr.author_id),
        labels: names(body.labels, 'title'),
      },
    };
  }
  return e;
}

function bitbucketAction(event: string): PullRequestEvent['action'] {
  if (event === 'pullrequest:created') return 'opened';
  if (event === 'pullrequest:updated') return 'updated';
  if (event === 'pullrequest:fulfilled' || event === 'pullrequest:rejected') return 'closed';
  return 'other';
}

const bitbucketClone = (page: string | null) => (page ? `${trimChar(page, '/', 'end')}.git` : null);

function bitbucket(event: string, body: Json): ForgeEvent {
  const e: ForgeEvent = { ...blank(event), repository: str(obj(body.repository).full_name) };
  if (event === 'repo:push') {
    // The newest change is the one deployed; Bitbucket lists no changed files.
    const change = list(obj(body.push).changes).map(obj).at(-1);
    if (!change) return e;
    const target = obj(change.new);
    if (!change.new) {
      const old = obj(change.old);
      return { ...e, kind: old.type === 'tag' ? 'tag' : 'push', ref: str(old.name), deleted: true };
    }
    return { ...e, kind: target.type === 'tag' ? 'tag' : 'push', ref: str(target.name), commit: str(obj(target.target).hash) };
  }
  if (event.startsWith('pullrequest:')) {
    const pr = obj(body.pullrequest);
    const source = obj(pr.source);
    return {
      ...e,
      kind: 'pull_request',
      pullRequest: {
        action: bitbucketAction(event),
        number: str(pr.id) ?? '',
        id: str(pr.id) ?? '',
        title: str(pr.title) ?? '',
        url: str(obj(obj(pr.links).html).href) ?? '',
        headBranch: str(obj(source.branch).name) ?? '',
        headCommit: str(obj(source.commit).hash),
        fromFork: differs(str(obj(source.repository).full_name), e.repository),
        // Bitbucket's payload links the repository's page; its clone address is that page with `.git`.
        headCloneUrl: cloneAddress(bitbucketClone(str(obj(obj(obj(source.repository).links).html).href))),
        author: str(obj(pr.author).uuid) ?? str(obj(pr.author).account_id),
        labels: null,
      },
    };
  }
  return e;
}

/** The header naming the event, per forge. */
export const EVENT_HEADER: Record<ForgeSource, string> = {
  github: 'x-github-event',
  gitlab: 'x-gitlab-event',
  bitbucket: 'x-event-key',
  gitea: 'x-gitea-event',
};

/** The header carrying a delivery's unique id, per forge (GitLab: its event UUID). */
export const DELIVERY_HEADER: Record<ForgeSource, string> = {
  github: 'x-github-delivery',
  gitlab: 'x-gitlab-event-uuid',
  bitbucket: 'x-request-uuid',
  gitea: 'x-gitea-delivery',
};

/** Reads a parsed delivery body of `source`; unknown shapes give kind `other`, never a throw. */
export function readForgeEvent(source: ForgeSource, event: string, body: unknown): ForgeEvent {
  const json = obj(body);
  switch (source) {
    case 'github':
    case 'gitea':
      return githubLike(event, json);
    case 'gitlab':
      return gitlab(event, json);
    case 'bitbucket':
      return bitbucket(event, json);
  }
}

/**
 * The generic route's body: a GitHub/Gitea/GitLab-shaped push (`ref`, `commits`), a Bitbucket
 * push, or anything else (a registry's notice, an empty body), which carries no branch.
 */
export function readGenericEvent(body: unknown): ForgeEvent {
  const json = obj(body);
  if (typeof json.ref === 'string') return refPush({ ...blank('push'), repository: str(obj(json.repository).full_name) }, json);
  if (json.push) return bitbucket('repo:push', json);
  return { ...blank('push'), kind: 'other' };
}
