import { describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import { CommandSigner } from '@skiff/domain';
import { ConfigError, describeConfig, readConfig, type Env } from './config.js';

const commandKey = CommandSigner.generate().publicKey;

function anEnv(overrides: Env = {}): Env {
  return {
    SKIFF_SERVER_ID: 'srv_01HZY3-a',
    SKIFF_CONTROL_PLANE_GRPC: '127.0.0.1:7443',
    SKIFF_NATS_URL: 'nats://127.0.0.1:4222',
    SKIFF_AGENT_CREDENTIAL: 'cred-s3cret',
    ...overrides,
  };
}

function issuesOf(env: Env): readonly string[] {
  try {
    readConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error('readConfig accepted the environment');
}

describe('readConfig', () => {
  it('reads a complete environment', () => {
    expect(readConfig(anEnv())).toEqual({
      serverId: 'srv_01HZY3-a',
      controlPlaneGrpc: '127.0.0.1:7443',
      natsServers: ['nats://127.0.0.1:4222'],
      logLevel: 'info',
      credential: { value: 'cred-s3cret' },
      ca: { stored: true },
      dataDir: '/var/lib/skiff-agent',
      maxConcurrentDeploys: 1,
      dockerSocket: '/var/run/docker.sock',
      dockerCli: null,
      buildTimeoutMs: 1_800_000,
      buildCap: { cpus: null, memoryBytes: 2 * 1024 ** 3, cgroup: 'docker/buildkit' },
      journalCompactMs: 1000,
      metricsIntervalMs: 10_000,
      composeProgram: null,
      proxy: { httpPort: 80, httpsPort: 443, bind: '0.0.0.0', container: 'skiff-proxy', issuer: 'acme', acmeEmail: null, dashboardPort: 2020, dashboardBind: '127.0.0.1' },
      clusterRegistry: null,
      serverRegistry: { image: 'registry:2', port: 5030 },
    });
  });

  it('reads the cluster registry, its login only with it, and never shows the password', () => {
    const config = readConfig(anEnv({ SKIFF_CLUSTER_REGISTRY: '10.0.0.1:5000', SKIFF_CLUSTER_REGISTRY_USERNAME: 'push', SKIFF_CLUSTER_REGISTRY_PASSWORD: 'reg-s3cret' }));
    expect(config.clusterRegistry).toEqual({ address: '10.0.0.1:5000', username: 'push', password: 'reg-s3cret' });
    expect(describeConfig(config)).toMatchObject({ clusterRegistry: { address: '10.0.0.1:5000', login: 'set' } });
    expect(JSON.stringify(describeConfig(config))).not.toContain('reg-s3cret');
    expect(readConfig(anEnv({ SKIFF_CLUSTER_REGISTRY: 'registry.example.com' })).clusterRegistry).toEqual({ address: 'registry.example.com' });
    expect(issuesOf(anEnv({ SKIFF_CLUSTER_REGISTRY: 'http://r/x' }))).toEqual([expect.stringMatching(/^SKIFF_CLUSTER_REGISTRY must be a registry host/)]);
    expect(issuesOf(anEnv({ SKIFF_CLUSTER_REGISTRY_USERNAME: 'push' }))).toEqual([expect.stringMatching(/need SKIFF_CLUSTER_REGISTRY$/)]);
    expect(issuesOf(anEnv({ SKIFF_CLUSTER_REGISTRY: 'r:5000', SKIFF_CLUSTER_REGISTRY_PASSWORD: 'p' }))).toEqual([
      'SKIFF_CLUSTER_REGISTRY_PASSWORD needs SKIFF_CLUSTER_REGISTRY_USERNAME',
    ]);
    expect(readConfig(anEnv({ SKIFF_CLUSTER_REGISTRY: 'r:5000', SKIFF_CLUSTER_REGISTRY_USERNAME: 'u', SKIFF_CLUSTER_REGISTRY_PASSWORD_FILE: '/etc/skiff/registry' })).clusterRegistry).toEqual({
      address: 'r:5000',
      username: 'u',
      passwordFile: '/etc/skiff/registry',
    });
    expect(issuesOf(anEnv({ SKIFF_CLUSTER_REGISTRY: 'r', SKIFF_CLUSTER_REGISTRY_USERNAME: 'u', SKIFF_CLUSTER_REGISTRY_PASSWORD: 'p', SKIFF_CLUSTER_REGISTRY_PASSWORD_FILE: 'rel' }))).toEqual([
      'set only one of SKIFF_CLUSTER_REGISTRY_PASSWORD and SKIFF_CLUSTER_REGISTRY_PASSWORD_FILE',
      'SKIFF_CLUSTER_REGISTRY_PASSWORD_FILE must be an absolute path',
    ]);
  });

  it('trims values, splits NATS server lists and reads the log level', () => {
    const config = readConfig(
      anEnv({
        SKIFF_SERVER_ID: ' srv1 ',
        SKIFF_CONTROL_PLANE_GRPC: 'dns:///cp.example.internal:7443',
        SKIFF_NATS_URL: 'nats://a.internal:4222, tls://b.internal:4222',
        SKIFF_LOG_LEVEL: 'debug',
        SKIFF_AGENT_CREDENTIAL: undefined,
        SKIFF_AGENT_CREDENTIAL_FILE: ' /etc/skiff/credential ',
        SKIFF_AGENT_DATA_DIR: '/srv/skiff-agent',
        SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS: '3',
        SKIFF_DOCKER_SOCKET: '/tmp/d2/docker.sock',
        SKIFF_DOCKER_CLI: ' /opt/docker/bin/docker ',
        SKIFF_BUILD_TIMEOUT_SECONDS: '600',
        SKIFF_BUILD_CPUS: ' 1.5 ',
        SKIFF_BUILD_MEMORY: '512m',
        SKIFF_BUILD_CGROUP: 'skiff/buildkit',
        SKIFF_COMPOSE_PROGRAM: ' docker compose ',
        SKIFF_PROXY_HTTP_PORT: ' 8080 ',
        SKIFF_PROXY_HTTPS_PORT: '8443',
        SKIFF_PROXY_BIND: '127.0.0.1',
        SKIFF_PROXY_CONTAINER: 'skiff-proxy-e2e_1',
        SKIFF_PROXY_ISSUER: 'internal',
        SKIFF_PROXY_ACME_EMAIL: ' ops@example.com ',
        SKIFF_PROXY_DASHBOARD_PORT: ' 9180 ',
        SKIFF_PROXY_DASHBOARD_BIND: '10.0.0.5',
      }),
    );
    expect(config).toEqual({
      serverId: 'srv1',
      controlPlaneGrpc: 'dns:///cp.example.internal:7443',
      natsServers: ['nats://a.internal:4222', 'tls://b.internal:4222'],
      logLevel: 'debug',
      credential: { file: '/etc/skiff/credential' },
      ca: { stored: true },
      dataDir: '/srv/skiff-agent',
      maxConcurrentDeploys: 3,
      dockerSocket: '/tmp/d2/docker.sock',
      dockerCli: '/opt/docker/bin/docker',
      buildTimeoutMs: 600_000,
      buildCap: { cpus: 1.5, memoryBytes: 512 * 1024 ** 2, cgroup: 'skiff/buildkit' },
      journalCompactMs: 1000,
      metricsIntervalMs: 10_000,
      composeProgram: 'docker compose',
      proxy: { httpPort: 8080, httpsPort: 8443, bind: '127.0.0.1', container: 'skiff-proxy-e2e_1', issuer: 'internal', acmeEmail: 'ops@example.com', dashboardPort: 9180, dashboardBind: '10.0.0.5' },
      clusterRegistry: null,
      serverRegistry: { image: 'registry:2', port: 5030 },
    });
  });

  it('reads the server registry image and port, refusing a port without room for the mirror', () => {
    expect(readConfig(anEnv({ SKIFF_SERVER_REGISTRY_IMAGE: 'example.com/skiff/registry:2.8', SKIFF_SERVER_REGISTRY_PORT: '6000' })).serverRegistry).toEqual({
      image: 'example.com/skiff/registry:2.8',
      port: 6000,
    });
    expect(issuesOf(anEnv({ SKIFF_SERVER_REGISTRY_PORT: '65535' }))).toEqual([expect.stringMatching(/^SKIFF_SERVER_REGISTRY_PORT must be a port/)]);
    expect(issuesOf(anEnv({ SKIFF_SERVER_REGISTRY_IMAGE: 'a b' }))).toEqual([expect.stringMatching(/^SKIFF_SERVER_REGISTRY_IMAGE/)]);
  });

  it('takes `docker compose`, `<cli> compose` or one program as SKIFF_COMPOSE_PROGRAM', () => {
    expect(readConfig(anEnv({ SKIFF_COMPOSE_PROGRAM: '/usr/local/bin/docker compose' })).composeProgram).toBe('/usr/local/bin/docker compose');
    expect(readConfig(anEnv({ SKIFF_COMPOSE_PROGRAM: '/usr/bin/docker-compose' })).composeProgram).toBe('/usr/bin/docker-compose');
    expect(issuesOf(anEnv({ SKIFF_COMPOSE_PROGRAM: 'docker-compose -H tcp://x' }))).toEqual([
      'SKIFF_COMPOSE_PROGRAM must be `docker compose`, `<docker cli> compose` or a docker-compose program',
    ]);
  });

  it('checks the proxy settings', () => {
    expect(readConfig(anEnv({ SKIFF_PROXY_BIND: '::1' })).proxy.bind).toBe('::1');
    expect(
      issuesOf(
        anEnv({
          SKIFF_PROXY_HTTP_PORT: '0',
          SKIFF_PROXY_HTTPS_PORT: '65536',
          SKIFF_PROXY_BIND: 'localhost',
          SKIFF_PROXY_CONTAINER: '-proxy',
          SKIFF_PROXY_ISSUER: 'letsencrypt',
          SKIFF_PROXY_ACME_EMAIL: 'not an address',
          SKIFF_PROXY_DASHBOARD_PORT: '-1',
          SKIFF_PROXY_DASHBOARD_BIND: 'localhost',
        }),
      ),
    ).toEqual([
      'SKIFF_PROXY_HTTP_PORT must be a port from 1 to 65535',
      'SKIFF_PROXY_HTTPS_PORT must be a port from 1 to 65535',
      'SKIFF_PROXY_BIND must be an IPv4 or IPv6 address',
      'SKIFF_PROXY_CONTAINER must be a container name (letters, digits, "_", "." or "-")',
      'SKIFF_PROXY_ISSUER must be one of acme, internal',
      'SKIFF_PROXY_ACME_EMAIL must be an email address',
      'SKIFF_PROXY_DASHBOARD_PORT must be a port from 0 to 65535',
      'SKIFF_PROXY_DASHBOARD_BIND must be an IPv4 or IPv6 address',
    ]);
    expect(issuesOf(anEnv({ SKIFF_PROXY_HTTP_PORT: '8443', SKIFF_PROXY_HTTPS_PORT: '8443' }))).toEqual([
      'SKIFF_PROXY_HTTP_PORT and SKIFF_PROXY_HTTPS_PORT must differ',
    ]);
  });

  it('reads a dashboard port of 0 as none, and refuses one the HTTP or HTTPS listener uses', () => {
    expect(readConfig(anEnv({ SKIFF_PROXY_DASHBOARD_PORT: '0' })).proxy.dashboardPort).toBe(0);
    expect(readConfig(anEnv({ SKIFF_PROXY_DASHBOARD_PORT: '' })).proxy.dashboardPort).toBe(2020);
    for (const value of ['80', '443']) {
      expect(issuesOf(anEnv({ SKIFF_PROXY_DASHBOARD_PORT: value }))).toEqual([
        'SKIFF_PROXY_DASHBOARD_PORT must differ from SKIFF_PROXY_HTTP_PORT and SKIFF_PROXY_HTTPS_PORT',
      ]);
    }
    expect(issuesOf(anEnv({ SKIFF_PROXY_DASHBOARD_PORT: '65536' }))).toEqual(['SKIFF_PROXY_DASHBOARD_PORT must be a port from 0 to 65535']);
  });

  it('refuses a build timeout that is not a number of seconds from 1 to 86400', () => {
    for (const value of ['0', '-5', '1.5', 'ten', '86401']) {
      expect(issuesOf(anEnv({ SKIFF_BUILD_TIMEOUT_SECONDS: value }))).toEqual([
        'SKIFF_BUILD_TIMEOUT_SECONDS must be a whole number of seconds from 1 to 86400',
      ]);
    }
  });

  it('reads the build cap: CPUs, memory with binary units, 0 for none; refuses the rest naming the variable', () => {
    expect(readConfig(anEnv({ SKIFF_BUILD_CPUS: '0', SKIFF_BUILD_MEMORY: '0' })).buildCap).toEqual({ cpus: 0, memoryBytes: 0, cgroup: 'docker/buildkit' });
    expect(readConfig(anEnv({ SKIFF_BUILD_MEMORY: '1.5G' })).buildCap.memoryBytes).toBe(1.5 * 1024 ** 3);
    expect(readConfig(anEnv({ SKIFF_BUILD_MEMORY: '33554432' })).buildCap.memoryBytes).toBe(32 * 1024 ** 2);
    for (const value of ['-1', 'two', '1,5', '2000']) {
      expect(issuesOf(anEnv({ SKIFF_BUILD_CPUS: value }))).toEqual(['SKIFF_BUILD_CPUS must be a number of CPUs from 0 (no cap) to 1024, e.g. 1.5']);
    }
    for (const value of ['lots', '2t', '1k', '-2g']) {
      expect(issuesOf(anEnv({ SKIFF_BUILD_MEMORY: value }))).toEqual([
        'SKIFF_BUILD_MEMORY must be 0 (no cap) or at least 6m, in bytes or with k, m or g (e.g. 2g)',
      ]);
    }
    for (const value of ['../memory', '/docker/buildkit', 'docker/../x', 'a b']) {
      expect(issuesOf(anEnv({ SKIFF_BUILD_CGROUP: value }))).toEqual([
        'SKIFF_BUILD_CGROUP must be a cgroup path relative to the cgroup mount, e.g. docker/buildkit',
      ]);
    }
  });

  it('reads the metrics interval in seconds (0: no sampling), refusing anything else', () => {
    expect(readConfig(anEnv({ SKIFF_METRICS_INTERVAL_SECONDS: '0' })).metricsIntervalMs).toBe(0);
    expect(readConfig(anEnv({ SKIFF_METRICS_INTERVAL_SECONDS: '30' })).metricsIntervalMs).toBe(30_000);
    for (const value of ['-1', '2.5', 'often', '3601']) {
      expect(issuesOf(anEnv({ SKIFF_METRICS_INTERVAL_SECONDS: value }))).toEqual([
        'SKIFF_METRICS_INTERVAL_SECONDS must be a whole number of seconds from 0 (no sampling) to 3600',
      ]);
    }
  });

  it('reports every missing variable at once', () => {
    expect(issuesOf({})).toEqual([
      'SKIFF_SERVER_ID is required',
      'SKIFF_CONTROL_PLANE_GRPC is required',
      'SKIFF_NATS_URL is required',
    ]);
    expect(issuesOf(anEnv({ SKIFF_SERVER_ID: '   ' }))).toEqual(['SKIFF_SERVER_ID is required']);
  });

  it.each(['srv.1', 'srv*', 'srv>', 'srv 1', 'a'.repeat(129), 'srv/1'])(
    'rejects server id %j, which cannot be a NATS subject token',
    (serverId) => {
      expect(issuesOf(anEnv({ SKIFF_SERVER_ID: serverId }))).toEqual([
        'SKIFF_SERVER_ID must be 1-128 letters, digits, "_" or "-"',
      ]);
    },
  );

  it.each(['localhost:4222', 'http://127.0.0.1:4222', 'nats://', 'nats://a:4222,', 'not a url'])(
    'rejects NATS URL %j',
    (natsUrl) => {
      expect(issuesOf(anEnv({ SKIFF_NATS_URL: natsUrl }))).toEqual([
        'SKIFF_NATS_URL must be a comma-separated list of nats:// or tls:// URLs with a host',
      ]);
    },
  );

  it('rejects a gRPC target with whitespace and an unknown log level', () => {
    expect(issuesOf(anEnv({ SKIFF_CONTROL_PLANE_GRPC: 'cp host:7443', SKIFF_LOG_LEVEL: 'verbose' }))).toEqual([
      'SKIFF_CONTROL_PLANE_GRPC must not contain whitespace',
      'SKIFF_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  it('never puts a value into its error message', () => {
    const secret = 'nats://agent:hunter2@[bad';
    const err = (() => {
      try {
        readConfig(anEnv({ SKIFF_NATS_URL: secret }));
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err?.message).not.toContain('hunter2');
  });

  it('takes the credential from exactly one place, and checks paths and the deploy limit', () => {
    expect(issuesOf(anEnv({ SKIFF_AGENT_CREDENTIAL_FILE: '/etc/skiff/credential' }))).toEqual([
      'set only one of SKIFF_AGENT_CREDENTIAL and SKIFF_AGENT_CREDENTIAL_FILE',
    ]);
    expect(
      issuesOf(
        anEnv({
          SKIFF_AGENT_CREDENTIAL: undefined,
          SKIFF_AGENT_CREDENTIAL_FILE: 'credential',
          SKIFF_AGENT_DATA_DIR: 'data',
          SKIFF_DOCKER_SOCKET: 'docker.sock',
          SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS: '0',
        }),
      ),
    ).toEqual([
      'SKIFF_AGENT_CREDENTIAL_FILE must be an absolute path',
      'SKIFF_AGENT_DATA_DIR must be an absolute path',
      'SKIFF_DOCKER_SOCKET must be an absolute path',
      'SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS must be a whole number from 1 to 64',
    ]);
    expect(issuesOf(anEnv({ SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS: '1.5' }))).toEqual([
      'SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS must be a whole number from 1 to 64',
    ]);
  });

  it('takes a join token instead of a credential, or neither (the credential a join stored)', () => {
    const joining = readConfig(anEnv({ SKIFF_AGENT_CREDENTIAL: undefined, SKIFF_JOIN_TOKEN: ' sjt_token-value ', SKIFF_COMMAND_KEY: commandKey }));
    expect(joining).toMatchObject({ credential: { stored: true }, joinToken: 'sjt_token-value' });
    expect(describeConfig(joining)).toMatchObject({ credential: 'stored', joinToken: 'set' });
    expect(JSON.stringify(describeConfig(joining))).not.toContain('sjt_token-value');
    const restarted = readConfig(anEnv({ SKIFF_AGENT_CREDENTIAL: undefined }));
    expect(restarted.credential).toEqual({ stored: true });
    expect(restarted.joinToken).toBeUndefined();
    expect(issuesOf(anEnv({ SKIFF_JOIN_TOKEN: 'sjt_x', SKIFF_COMMAND_KEY: commandKey }))).toEqual([
      'SKIFF_JOIN_TOKEN cannot be used with SKIFF_AGENT_CREDENTIAL or SKIFF_AGENT_CREDENTIAL_FILE',
    ]);
  });

  it('refuses a join token without the command key of the join command', () => {
    expect(issuesOf(anEnv({ SKIFF_AGENT_CREDENTIAL: undefined, SKIFF_JOIN_TOKEN: 'sjt_x' }))).toEqual([
      'SKIFF_JOIN_TOKEN needs SKIFF_COMMAND_KEY: start the agent with the whole join command',
    ]);
  });
});

describe('SKIFF_COMMAND_KEY', () => {
  it('is read when it is an Ed25519 public key, refused naming the variable otherwise', () => {
    const key = commandKey;
    expect(readConfig(anEnv({ SKIFF_COMMAND_KEY: ` ${key} ` })).commandKey).toBe(key);
    expect(readConfig(anEnv()).commandKey).toBeUndefined();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    expect(issuesOf(anEnv({ SKIFF_COMMAND_KEY: rsa }))).toEqual([
      "SKIFF_COMMAND_KEY must be the control plane's Ed25519 public key in base64 SPKI form (an rsa key, not Ed25519)",
    ]);
    expect(issuesOf(anEnv({ SKIFF_COMMAND_KEY: 'AAAA' }))).toEqual([
      "SKIFF_COMMAND_KEY must be the control plane's Ed25519 public key in base64 SPKI form (not a public key (base64 of its SPKI DER form))",
    ]);
  });
});

describe('the control plane CA', () => {
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

  it('comes from the join command (base64 PEM), a file, or the data directory', () => {
    const given = readConfig(anEnv({ SKIFF_CONTROL_PLANE_CA: Buffer.from(pem).toString('base64') }));
    expect(given.ca).toEqual({ pem });
    expect(describeConfig(given).ca).toBe('given');
    expect(readConfig(anEnv({ SKIFF_CA_FILE: ' /srv/skiff/tls/ca.pem ' })).ca).toEqual({ file: '/srv/skiff/tls/ca.pem' });
  });

  it('is refused when it is not base64 of a PEM certificate, or given twice', () => {
    expect(issuesOf(anEnv({ SKIFF_CONTROL_PLANE_CA: 'not base64!' }))).toEqual([
      'SKIFF_CONTROL_PLANE_CA must be a PEM certificate in base64 (as the join command gives it)',
    ]);
    expect(issuesOf(anEnv({ SKIFF_CONTROL_PLANE_CA: Buffer.from(pem).toString('base64'), SKIFF_CA_FILE: '/ca.pem' }))).toEqual([
      'set only one of SKIFF_CONTROL_PLANE_CA and SKIFF_CA_FILE',
    ]);
    expect(issuesOf(anEnv({ SKIFF_CA_FILE: 'ca.pem' }))).toEqual(['SKIFF_CA_FILE must be an absolute path']);
  });
});

describe('describeConfig', () => {
  it('masks credentials in NATS URLs', () => {
    const config = readConfig(anEnv({ SKIFF_NATS_URL: 'nats://agent:hunter2@127.0.0.1:4222,nats://127.0.0.1:4223' }));
    const described = describeConfig(config);
    expect(described.natsServers).toEqual(['nats://***@127.0.0.1:4222', 'nats://127.0.0.1:4223']);
    expect(described.credential).toBe('set');
    expect(JSON.stringify(described)).not.toContain('hunter2');
    expect(JSON.stringify(described)).not.toContain('cred-s3cret');
  });
});
