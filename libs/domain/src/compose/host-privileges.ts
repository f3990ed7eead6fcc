/**
 * What in a compose file reaches past its containers into the host (issue 13, "A compose stack
 * is root on the host"): a stack using any of it has root on its server. On a server shared by
 * organizations the control plane refuses these unless the server trusts the organization.
 *
 * `hostPrivileges(file)` lists, per service, every key that gives such power:
 * - `privileged` (anything but false), a non-empty `cap_add`, `devices`,
 *   `device_cgroup_rules`, `security_opt` (but `no-new-privileges`), `cgroup_parent`,
 *   `cgroup: host`;
 * - `pid`, `ipc`, `uts`, `userns_mode`, `network_mode` set to `host`, to `container:…`
 *   (another container's namespace) or to something interpolated (`$…`);
 * - `volumes_from` naming a container (`container:…`) or anything but a service of the stack;
 * - `sysctls` but the container's own namespaces' (`net.*`, `kernel.shm*`/`msg*`/`sem`,
 *   `fs.mqueue.*`), a `runtime` but runc, `extends` of another `file`, `oom_kill_disable`, a
 *   negative `oom_score_adj`, an `isolation` but `default`, `storage_opt` but `size`; a top-level
 *   `include` (other files, which are not checked);
 * - `volumes`: a bind source that is absolute (the Docker socket included), `~…` or `$…`, and a
 *   named volume whose top-level definition binds a host path (`driver_opts` with a `device`);
 * - `env_file` and `build` contexts with such a path; the `configs` and `secrets` a service uses
 *   whose top-level `file:` is such a path (those no service uses are listed under `service: null`).
 * A relative path climbing out of the stack's directory (`../../../etc`, from the compose
 * file's directory: `options.composePath`) counts as a host path. Relative paths inside it
 * (`./data`, `.env`, `../files/db`), named volumes, `cap_drop`, `network_mode: bridge` are
 * harmless: relative bind mounts are kept inside the stack's own directory (bind-mounts.ts).
 * So is `group_add`: groups matter only for files and devices the container reaches, and the
 * host's are refused above.
 * The file is read as Compose would merge it (`<<` and aliases resolved).
 */
import { posix } from 'node:path';
import { type ComposeInput, composeFileOf } from './compose-file.js';

export interface HostPrivilege {
  /** The service using it; null for a top-level config/secret/volume no service uses. */
  service: string | null;
  /** The compose key (`privileged`, `volumes`, `network_mode`, … or `configs "x"` at top level). */
  key: string;
  /** What it gives, in a few words. */
  why: string;
}

type Json = unknown;
type Obj = Record<string, Json>;

const NAMESPACES = ['pid', 'ipc', 'uts', 'userns_mode', 'network_mode'] as const;
/**
 * Sysctls of the container's own namespaces (the ones Docker accepts): its network (a stack never
 * has the host's, see network_mode) and its IPC (never the host's, see ipc). Any other is the host's.
 */
const NAMESPACED_SYSCTL = /^(?:net\.[A-Za-z0-9_.\-/]+|kernel\.(?:shm[a-z_]+|msg[a-z_]+|sem)|fs\.mqueue\.[a-z_]+)$/;
const RUNC = /^(?:runc|io\.containerd\.runc\.v2)$/;
const FALSE = /^(?:false|False|FALSE|no|No|NO|off|Off|OFF|n|N)$/;

export interface HostPrivilegeOptions {
  /** The compose file's path in the stack's source (default `docker-compose.yml`): relative paths start at its directory. */
  composePath?: string;
}

export function hostPrivileges(input: ComposeInput, options: HostPrivilegeOptions = {}): HostPrivilege[] {
  const root = composeFileOf(input).document.toJS({ maxAliasCount: -1 }) as Json;
  if (!isObj(root)) return [];
  // The stack's directory on a server holds `code/` (the source) and `files/` (bind-mounts.ts):
  // a relative path may reach both, nothing above.
  const composeDir = posix.join(STACK, 'code', posix.dirname(options.composePath || 'docker-compose.yml'));
  const hostPath = (path: Json): boolean => outsideTheStack(path) || (typeof path === 'string' && !isInside(STACK, posix.resolve(composeDir, path)));
  const out: HostPrivilege[] = [];
  const bindVolumes = hostVolumes(root.volumes, hostPath);
  const fileResources = { configs: hostFileResources(root.configs, hostPath), secrets: hostFileResources(root.secrets, hostPath) };
  const used = { configs: new Set<string>(), secrets: new Set<string>() };
  const services = isObj(root.services) ? root.services : {};
  for (const [service, raw] of Object.entries(services)) {
    if (!isObj(raw)) continue;
    const add = (key: string, why: string) => out.push({ service, key, why });
    const privileged = raw.privileged;
    if (privileged !== undefined && privileged !== null && !(typeof privileged === 'string' && FALSE.test(privileged)) && privileged !== false) {
      add('privileged', 'all devices and capabilities of the host');
    }
    if (nonEmpty(raw.cap_add)) add('cap_add', 'extra kernel capabilities');
    if (nonEmpty(raw.devices)) add('devices', 'host devices');
    if (nonEmpty(raw.device_cgroup_rules)) add('device_cgroup_rules', 'access to host devices');
    if (nonEmpty(raw.cgroup_parent)) add('cgroup_parent', 'a cgroup of the host');
    if (raw.cgroup === 'host') add('cgroup', "the host's cgroup namespace");
    if (Array.isArray(raw.security_opt) && raw.security_opt.some((o) => !(typeof o === 'string' && /^no-new-privileges(?:[:=]true)?$/.test(o)))) {
      add('security_opt', 'weaker confinement (AppArmor, seccomp, SELinux)');
    }
    for (const key of NAMESPACES) {
      const value = raw[key];
      if (typeof value === 'string' && (value === 'host' || value.startsWith('container:') || value.includes('$'))) {
        add(key, value === 'host' ? "the host's namespace" : "another container's namespace");
      }
    }
    if (Array.isArray(raw.volumes_from) && raw.volumes_from.some((v) => typeof v !== 'string' || v.startsWith('container:') || !(v.split(':')[0]! in services))) {
      add('volumes_from', "another container's volumes");
    }
    if (sysctls(raw.sysctls).some((name) => !NAMESPACED_SYSCTL.test(name))) add('sysctls', 'kernel settings of the host');
    if (raw.runtime !== undefined && raw.runtime !== null && !(typeof raw.runtime === 'string' && RUNC.test(raw.runtime))) {
      add('runtime', 'another container runtime');
    }
    if (isObj(raw.extends) && raw.extends.file !== undefined) add('extends', 'another file, not checked');
    if (raw.oom_kill_disable !== undefined && raw.oom_kill_disable !== null && raw.oom_kill_disable !== false && !(typeof raw.oom_kill_disable === 'string' && FALSE.test(raw.oom_kill_disable))) {
      add('oom_kill_disable', "the host's memory");
    }
    if (raw.oom_score_adj !== undefined && raw.oom_score_adj !== null && !(Number(raw.oom_score_adj) >= 0)) add('oom_score_adj', "precedence over the host's processes when memory runs out");
    if (raw.isolation !== undefined && raw.isolation !== null && raw.isolation !== 'default') add('isolation', 'another isolation technology');
    if (isObj(raw.storage_opt) && Object.keys(raw.storage_opt).some((k) => k !== 'size')) add('storage_opt', "options of the host's storage driver");
    if (Array.isArray(raw.volumes)) {
      for (const entry of raw.volumes) {
        const why = volumeEntry(entry, bindVolumes, hostPath);
        if (why) {
          add('volumes', why);
          break;
        }
      }
    }
    const envFiles = raw.env_file === undefined || raw.env_file === null ? [] : Array.isArray(raw.env_file) ? raw.env_file : [raw.env_file];
    if (envFiles.some((e) => hostPath(typeof e === 'string' ? e : isObj(e) ? e.path : null))) add('env_file', 'a file of the host');
    const build = raw.build;
    const context = typeof build === 'string' ? build : isObj(build) ? build.context : null;
    const extra = isObj(build) && isObj(build.additional_contexts) ? Object.values(build.additional_contexts) : [];
    if (hostPath(context) || extra.some(hostPath)) add('build', 'a directory of the host');
    for (const kind of ['configs', 'secrets'] as const) {
      if (!Array.isArray(raw[kind])) continue;
      for (const ref of raw[kind] as Json[]) {
        const name = typeof ref === 'string' ? ref : isObj(ref) && typeof ref.source === 'string' ? ref.source : null;
        if (name === null) continue;
        used[kind].add(name);
        if (fileResources[kind].has(name)) {
          add(kind, `a file of the host (${kind} "${name}")`);
          break;
        }
      }
    }
  }
  if (nonEmpty(root.include)) out.push({ service: null, key: 'include', why: 'other files, not checked' });
  for (const kind of ['configs', 'secrets'] as const) {
    for (const name of fileResources[kind]) {
      if (!used[kind].has(name)) out.push({ service: null, key: `${kind} "${name}"`, why: 'a file of the host' });
    }
  }
  const usedVolumes = new Set(Object.values(services).flatMap((s) => (isObj(s) && Array.isArray(s.volumes) ? s.volumes.map(volumeName) : [])));
  for (const name of bindVolumes) {
    if (!usedVolumes.has(name)) out.push({ service: null, key: `volumes "${name}"`, why: 'a directory of the host' });
  }
  return out;
}

/** The refusal's words: `service "web": privileged is not allowed on this server`. */
export function describeHostPrivilege(p: HostPrivilege): string {
  return `${p.service === null ? '' : `service "${p.service}": `}${p.key} is not allowed on this server (${p.why})`;
}

/** Why one `volumes` entry reaches the host, or null. */
function volumeEntry(entry: Json, bindVolumes: Set<string>, hostPath: (path: Json) => boolean): string | null {
  if (typeof entry === 'string') {
    const colon = entry.indexOf(':');
    const source = colon < 0 ? '' : entry.slice(0, colon);
    if (hostPath(source)) return dockerSocket(source) ? 'the Docker socket' : `the host path ${source}`;
    if (bindVolumes.has(source)) return `volume "${source}", a directory of the host`;
    return null;
  }
  if (!isObj(entry)) return null;
  const source = typeof entry.source === 'string' ? entry.source : null;
  if (entry.type === 'bind' || entry.type === undefined) {
    if (hostPath(source)) return dockerSocket(source as string) ? 'the Docker socket' : `the host path ${source}`;
  }
  if (entry.type === 'npipe') return 'a pipe of the host';
  if (source !== null && bindVolumes.has(source)) return `volume "${source}", a directory of the host`;
  return null;
}

function volumeName(entry: Json): string | null {
  if (typeof entry === 'string') {
    const colon = entry.indexOf(':');
    return colon < 0 ? null : entry.slice(0, colon);
  }
  return isObj(entry) && typeof entry.source === 'string' ? entry.source : null;
}

/** Top-level volumes that mount a host path (`driver_opts` with a `device`, as the local driver's `o: bind`). */
function hostVolumes(volumes: Json, hostPath: (path: Json) => boolean): Set<string> {
  const out = new Set<string>();
  if (!isObj(volumes)) return out;
  for (const [name, definition] of Object.entries(volumes)) {
    if (!isObj(definition) || !isObj(definition.driver_opts)) continue;
    const { device, o } = definition.driver_opts;
    if (hostPath(device) || (typeof o === 'string' && /(?:^|,)\s*r?bind\s*(?:,|$)/.test(o))) out.add(name);
  }
  return out;
}

function hostFileResources(resources: Json, hostPath: (path: Json) => boolean): Set<string> {
  const out = new Set<string>();
  if (!isObj(resources)) return out;
  for (const [name, definition] of Object.entries(resources)) {
    if (isObj(definition) && hostPath(definition.file)) out.add(name);
  }
  return out;
}

const STACK = '/stack';

function isInside(root: string, path: string): boolean {
  const rel = posix.relative(root, path);
  return rel === '' || (!rel.startsWith('../') && rel !== '..' && !posix.isAbsolute(rel));
}

/** A path outside the stack whatever the file's place: absolute, home (`~`) or interpolated (`$`, unknown until deploy). */
function outsideTheStack(path: Json): boolean {
  return typeof path === 'string' && (path.startsWith('/') || path.startsWith('~') || path.includes('$') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\'));
}

function dockerSocket(path: string): boolean {
  return /docker\.sock/.test(path);
}

/** The names a `sysctls` mapping or `name=value` list sets. */
function sysctls(value: Json): string[] {
  if (Array.isArray(value)) return value.map((entry) => (typeof entry === 'string' ? entry.split('=')[0]!.trim() : ''));
  return isObj(value) ? Object.keys(value) : [];
}

function nonEmpty(value: Json): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObj(value)) return Object.keys(value).length > 0;
  return true;
}

function isObj(value: Json): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
