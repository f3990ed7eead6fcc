import type { RouterName } from '@skiff/contracts';

/**
 * What each router (an OpenAPI tag) is, in words a reader new to Skiff follows. The API keeps
 * generic names for some things (`forgeA`, `dbA`, `pack_one`, the notification channel kinds):
 * this is where they are said plainly.
 */
export const TAG_DESCRIPTIONS: Record<RouterName, string> = {
  ai: 'An OpenAI-compatible endpoint (URL, key, model) that suggests compose templates for a description and deploys one.',
  application:
    'Applications: one container service built from a source (git, a forge connection: forgeA GitHub, forgeB GitLab, ' +
    'forgeC Bitbucket, forgeD Gitea or Forgejo; a registry image; an uploaded archive) with a build type (containerfile ' +
    'a Dockerfile, pack_one Nixpacks, pack_two Railpack, legacy_buildpacks Heroku buildpacks via `pack`, ' +
    'cloudnative_buildpacks Paketo buildpacks via `pack`, static files), deployed as a Docker Swarm service.',
  compose: 'Compose stacks: a Docker Compose file (raw text, git or a forge) deployed with `docker compose` or `docker stack deploy`; templates from a catalog.',
  cache: 'Cache instances: a Redis server (default image `redis:8`, password required) with its data on a named volume.',
  dbA: 'dbA is PostgreSQL: database services (default image `postgres:17`) with their data on a named volume, generated write-only passwords and connection strings.',
  dbB: 'dbB is MariaDB: database services (default image `mariadb:11`) with their data on a named volume, generated write-only passwords and connection strings.',
  dbC: 'dbC is MySQL: database services (default image `mysql:8`) with their data on a named volume, generated write-only passwords and connection strings.',
  dbD: 'dbD is MongoDB: database services (default image `mongo:7`) with their data on a named volume, generated write-only passwords and connection strings.',
  dbE: 'dbE is libSQL: database services (default image `ghcr.io/tursodatabase/libsql-server`) with their data on a named volume, generated write-only passwords and connection strings.',
  backup:
    'Scheduled and manual backups to an S3-compatible destination: databases (dbA PostgreSQL, dbB MariaDB, dbC MySQL, ' +
    'dbD MongoDB, dbE libSQL), a database inside a compose stack, or web-server (the platform itself).',
  destination: 'S3-compatible backup destinations: endpoint, region, bucket and access keys.',
  domain: 'Domains routed by the reverse proxy (Caddy) to an application, a compose service or a preview deployment; generated `sslip.io` names.',
  organization: 'Organizations, their members, roles and invitations.',
  environment: 'Environments of a project (e.g. production, staging), with shared variables.',
  project: 'Projects: groups of environments and their services, with shared variables.',
  forgeC: 'forgeC is Bitbucket: workspace connections (app password or API token) to list repositories and branches.',
  forgeB: 'forgeB is GitLab (gitlab.com or self-hosted): OAuth application connections, with group and project ids.',
  forgeA: 'forgeA is GitHub: GitHub App connections (app id, private key, installation) for repositories, branches and push or tag webhooks.',
  forgeD: 'forgeD is Gitea or Forgejo (self-hosted): OAuth or token connections.',
  gitProvider: 'Every git forge connection of the organization (forgeA GitHub, forgeB GitLab, forgeC Bitbucket, forgeD Gitea or Forgejo), whatever its kind.',
  server: 'Remote servers: each runs a Skiff agent that joins with a one-time token; status and join commands.',
  sshKey: 'SSH keys for cloning private git repositories.',
  container: 'The containers of the Docker Engine on a server: lists, configuration, restarts.',
  security: 'HTTP basic-auth users that protect an application behind the proxy.',
  certificates: 'TLS certificates uploaded for domains served with `certificateType: custom`.',
  billing: 'Checkout and customer-portal sessions of a payment provider (Stripe API shape), when one is configured.',
  previewDeployment: 'Preview deployments: one per pull request of an application, on a wildcard domain.',
  cluster: 'The nodes of the Docker Swarm a server belongs to, and what runs on them.',
  notification:
    'Notification channels and the platform events each receives: hook (a Slack-style incoming webhook), messenger ' +
    '(a Telegram bot), community (a Discord webhook), email (SMTP), push (a Gotify server).',
  settings: 'Host settings of the platform host: its own domain, the reverse proxy (Caddy) configuration, cleanup, SSH key, version.',
  user: 'Users, their permissions, API keys, invitations and metrics.',
  deployment: 'The deploy history and logs of applications and compose stacks.',
  command: 'Commands queued for a server\'s agent (stop, start, reload, cache deploys…): follow one until it ends.',
  audit: 'The audit log: who changed what in the organization, and who was refused.',
  mounts: "Applications' mounts: named volumes kept across redeploys, files written by the server's agent, host binds where the server trusts the organization.",
  volumeBackup: "Backups of applications' named volumes to a destination, on a schedule or now, and their restores.",
};
