import { describe, expect, it } from 'vitest';
import { describeHostPrivilege, hostPrivileges } from './host-privileges.js';
import { KITCHEN_SINK, SWARM_STACK, WORDPRESS } from './test-fixtures.js';

const keys = (text: string) => hostPrivileges(text).map((p) => `${p.service ?? '-'} ${p.key}`);
const service = (body: string) => `services:\n  web:\n    image: nginx\n${body.replace(/^/gm, '    ')}\n`;

describe('hostPrivileges', () => {
  it.each([
    ['privileged: true', 'privileged'],
    ['privileged: "yes"', 'privileged'],
    ['privileged: ${PRIV}', 'privileged'],
    ['cap_add: [SYS_ADMIN]', 'cap_add'],
    ['pid: host', 'pid'],
    ['ipc: host', 'ipc'],
    ['uts: host', 'uts'],
    ['userns_mode: host', 'userns_mode'],
    ['network_mode: host', 'network_mode'],
    ['network_mode: "container:other"', 'network_mode'],
    ['devices: ["/dev/sda:/dev/sda"]', 'devices'],
    ['device_cgroup_rules: ["c 1:3 mr"]', 'device_cgroup_rules'],
    ['security_opt: ["apparmor:unconfined"]', 'security_opt'],
    ['security_opt: ["seccomp:unconfined"]', 'security_opt'],
    ['cgroup: host', 'cgroup'],
    ['volumes: ["/:/host"]', 'volumes'],
    ['volumes: ["/var/run/docker.sock:/var/run/docker.sock"]', 'volumes'],
    ['volumes: ["/run/docker.sock:/d.sock:ro"]', 'volumes'],
    ['volumes: ["~/.ssh:/ssh"]', 'volumes'],
    ['volumes: ["$HOME:/h"]', 'volumes'],
    ['volumes: [{type: bind, source: /etc, target: /e}]', 'volumes'],
    ['volumes_from: ["container:other"]', 'volumes_from'],
    ['env_file: /etc/environment', 'env_file'],
    ['env_file: [{path: /root/.env}]', 'env_file'],
    ['build: /', 'build'],
    ['cgroup_parent: /system.slice', 'cgroup_parent'],
    ['sysctls: {kernel.core_pattern: "|/tmp/x"}', 'sysctls'],
    ['sysctls: ["vm.overcommit_memory=1"]', 'sysctls'],
    ['sysctls: {"${KEY}": 1}', 'sysctls'],
    ['runtime: nvidia', 'runtime'],
    ['runtime: ${RUNTIME}', 'runtime'],
    ['extends: {file: ../../other.yml, service: web}', 'extends'],
    ['extends: {file: common.yml, service: base}', 'extends'],
    ['volumes_from: ["outsider"]', 'volumes_from'],
    ['volumes_from: ["outsider:ro"]', 'volumes_from'],
    ['oom_kill_disable: true', 'oom_kill_disable'],
    ['oom_score_adj: -1000', 'oom_score_adj'],
    ['isolation: process', 'isolation'],
    ['storage_opt: {dm.basesize: 20G}', 'storage_opt'],
  ])('%s is listed as %s', (body, key) => {
    expect(keys(service(body))).toEqual([`web ${key}`]);
  });

  it('lists relative paths that climb out of the stack directory, from where the compose file is', () => {
    expect(keys(service('volumes: ["../../etc:/etc2", "../files/db:/db"]'))).toEqual(['web volumes']);
    expect(keys(service('env_file: ../../../root/.env'))).toEqual(['web env_file']);
    expect(keys(service('volumes: [{type: bind, source: ../.., target: /up}]'))).toEqual(['web volumes']);
    const nested = service('volumes: ["../../files/db:/db", "../data:/data"]');
    expect(hostPrivileges(nested, { composePath: 'deploy/stack.yml' })).toEqual([]);
    expect(keys(nested)).toEqual(['web volumes']);
  });

  it('lists a named volume that binds a host path, and configs/secrets with a host file', () => {
    const text = `services:
  web:
    image: nginx
    volumes: [sock:/var/run/docker.sock]
    configs: [app]
    secrets: [{source: key}]
volumes:
  sock:
    driver: local
    driver_opts: {type: none, o: bind, device: /var/run/docker.sock}
  free:
    driver_opts: {o: bind, device: /etc}
configs:
  app: {file: /etc/passwd}
  unused: {file: /etc/shadow}
  fine: {file: ./app.conf}
secrets:
  key: {file: ~/.ssh/id_rsa}
`;
    expect(keys(text)).toEqual(['web volumes', 'web configs', 'web secrets', '- configs "unused"', '- volumes "free"']);
  });

  it('lists a top-level include: the files it pulls in are not checked', () => {
    expect(keys(`include: [../../other/compose.yml]\n${service('')}`)).toEqual(['- include']);
  });

  it('leaves namespaced sysctls, the default runtime, extends within the file and volumes_from the stack alone', () => {
    const text = `services:
  base:
    image: nginx
  web:
    extends: base
    sysctls: {net.core.somaxconn: 1024, kernel.shmmax: 65536, fs.mqueue.msg_max: 10}
    runtime: runc
    volumes_from: ["base:ro"]
    oom_score_adj: 500
    oom_kill_disable: false
    isolation: default
    storage_opt: {size: 1G}
    group_add: [mail]
  other:
    image: nginx
    extends: {service: base}
    sysctls: ["net.ipv4.tcp_syncookies=0", "kernel.sem=250 32000 100 128"]
`;
    expect(hostPrivileges(text)).toEqual([]);
  });

  it('reads through merge keys and aliases', () => {
    const text = `x-base: &base
  image: nginx
  privileged: true
services:
  web:
    <<: *base
  other: *base
`;
    expect(keys(text)).toEqual(['web privileged', 'other privileged']);
  });

  it('leaves harmless files alone', () => {
    expect(hostPrivileges(service(`volumes:
  - ./data:/data
  - data:/var/lib/data
  - .:/src
  - type: bind
    source: ./conf
    target: /conf
  - /anonymous
cap_drop: [ALL]
network_mode: bridge
pid: "service:db"
privileged: false
security_opt: ["no-new-privileges:true"]
env_file: .env
build: .
configs: [app]`) + `volumes:\n  data: {}\nconfigs:\n  app: {file: ./app.conf}\n`)).toEqual([]);
    for (const text of [WORDPRESS, SWARM_STACK]) expect(hostPrivileges(text)).toEqual([]);
    // volumes_from a service of the stack is fine; its `container:` entry is another container's.
    expect(keys(KITCHEN_SINK)).toEqual(['worker volumes_from']);
  });

  it('words the refusal with the service and the key', () => {
    expect(describeHostPrivilege(hostPrivileges(service('privileged: true'))[0])).toBe(
      'service "web": privileged is not allowed on this server (all devices and capabilities of the host)',
    );
  });
});
