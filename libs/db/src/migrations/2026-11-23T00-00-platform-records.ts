import { type CreateTableBuilder, type Kysely, sql } from 'kysely';

const now = sql`now()`;

/** The column name of a camelCase field (CamelCasePlugin with underscoreBetweenUppercaseLetters). */
const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Nullable columns by type, named as the API fields they hold. */
interface Columns {
  text?: string[];
  int?: string[];
  bool?: string[];
  json?: string[];
}

const TYPES = { text: 'text', int: 'integer', bool: 'boolean', json: 'jsonb' } as const;

function addColumns<T extends { addColumn: CreateTableBuilder<any, any>['addColumn'] }>(t: T, columns: Columns): T {
  let out = t;
  for (const [kind, names] of Object.entries(columns) as [keyof Columns, string[]][]) {
    for (const name of names) out = out.addColumn(snake(name), TYPES[kind]) as unknown as T;
  }
  return out;
}

async function alterAdd(db: Kysely<any>, table: string, columns: Columns) {
  for (const [kind, names] of Object.entries(columns) as [keyof Columns, string[]][]) {
    for (const name of names) await db.schema.alterTable(table).addColumn(snake(name), TYPES[kind]).execute();
  }
}

const CLUSTER = [
  'healthCheckCluster',
  'restartPolicyCluster',
  'placementCluster',
  'updateConfigCluster',
  'rollbackConfigCluster',
  'modeCluster',
  'labelsCluster',
  'networkCluster',
  'stopGracePeriodCluster',
  'endpointSpecCluster',
  'ulimitsCluster',
];
const RESOURCES = ['memoryReservation', 'memoryLimit', 'cpuReservation', 'cpuLimit'];
const FORGE_SOURCE = [
  'repository', 'owner', 'branch', 'forgeAId', 'triggerType',
  'forgeBId', 'forgeBRepository', 'forgeBOwner', 'forgeBBranch', 'forgeBPathNamespace',
  'forgeCId', 'forgeCRepository', 'forgeCRepositorySlug', 'forgeCOwner', 'forgeCBranch',
  'forgeDId', 'forgeDRepository', 'forgeDOwner', 'forgeDBranch',
  'customGitUrl', 'customGitBranch', 'customGitSSHKeyId',
];

export async function up(db: Kysely<any>): Promise<void> {
  await alterAdd(db, 'applications', {
    text: [
      ...RESOURCES, ...FORGE_SOURCE,
      'previewEnv', 'buildArgs', 'buildSecrets', 'previewBuildArgs', 'previewBuildSecrets',
      'previewWildcard', 'previewPath', 'previewCustomCertResolver', 'previewCertificateType',
      'title', 'subtitle', 'command', 'refreshToken', 'buildPath',
      'forgeBBuildPath', 'forgeCBuildPath', 'forgeDBuildPath',
      'username', 'password', 'containerImage', 'registryUrl', 'customGitBuildPath',
      'buildType', 'containerfile', 'containerContextPath', 'containerBuildStage',
      'legacyVersion', 'packTwoVersion', 'publishDirectory', 'dropBuildPath', 'icon',
    ],
    int: ['previewPort', 'previewLimit', 'forgeBProjectId'],
    bool: [
      'previewHttps', 'isPreviewDeploymentsActive', 'previewRequireCollaboratorPermissions',
      'rollbackActive', 'enabled', 'cleanCache', 'autoDeploy', 'createEnvFile', 'isStaticSpa',
      'enableSubmodules',
    ],
    json: ['watchPaths', 'previewLabels', 'args', ...CLUSTER],
  });
  await db.schema.alterTable('applications').addColumn('replicas', 'integer', (c) => c.notNull().defaultTo(1)).execute();

  await alterAdd(db, 'compose_stacks', {
    text: [...FORGE_SOURCE, 'composePath', 'command', 'refreshToken', 'suffix'],
    int: ['forgeBProjectId'],
    bool: ['enableSubmodules', 'autoDeploy', 'randomize', 'isolatedDeployment', 'isolatedDeploymentsVolume'],
    json: ['watchPaths'],
  });

  await alterAdd(db, 'cache_instances', {
    text: [...RESOURCES, 'command'],
    int: ['externalPort'],
    bool: ['detachPlatformNetwork'],
    json: ['args', 'networkIds', ...CLUSTER],
  });
  await db.schema.alterTable('cache_instances').addColumn('replicas', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  // A host port is published once per server.
  await sql`create unique index cache_instances_server_external_port on cache_instances (coalesce(server_id, ''), external_port) where external_port is not null`.execute(db);

  // App names are Docker service names: unique per server across every kind of service.
  for (const table of ['applications', 'compose_stacks', 'cache_instances']) {
    await sql`create unique index ${sql.raw(`${table}_server_app_name`)} on ${sql.table(table)} (coalesce(server_id, ''), app_name)`.execute(db);
  }

  const organizationId = (t: CreateTableBuilder<any, any>) =>
    t.addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'));
  const created = (t: CreateTableBuilder<any, any>) => t.addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now));

  await created(
    addColumns(
      organizationId(db.schema.createTable('servers').addColumn('id', 'text', (c) => c.primaryKey()))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending')),
      { text: ['description'] },
    ),
  ).execute();

  // A service on a server keeps it: removing a server with services is refused. Checked at
  // commit, so that removing an organization (which cascades to both) goes through.
  for (const table of ['applications', 'compose_stacks', 'cache_instances']) {
    await db.schema
      .alterTable(table)
      .addForeignKeyConstraint(`${table}_server_fk`, ['server_id'], 'servers', ['id'], (c) => c.deferrable().initiallyDeferred())
      .execute();
  }

  await created(
    addColumns(
      organizationId(db.schema.createTable('ssh_keys').addColumn('id', 'text', (c) => c.primaryKey()))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('private_key', 'text', (c) => c.notNull()),
      { text: ['description'] },
    ),
  ).execute();

  await created(
    organizationId(db.schema.createTable('domains').addColumn('id', 'text', (c) => c.primaryKey()))
      .addColumn('application_id', 'text', (c) => c.references('applications.id').onDelete('cascade'))
      .addColumn('compose_id', 'text', (c) => c.references('compose_stacks.id').onDelete('cascade'))
      .addColumn('preview_deployment_id', 'text')
      .addColumn('server_id', 'text')
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull().defaultTo('/'))
      .addColumn('https', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('certificate_type', 'text', (c) => c.notNull().defaultTo('none'))
      .addColumn('strip_path', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('forward_auth_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
      .addColumn('port', 'integer')
      .addColumn('custom_entrypoint', 'text')
      .addColumn('custom_cert_resolver', 'text')
      .addColumn('service_name', 'text')
      .addColumn('domain_type', 'text', (c) => c.notNull())
      .addColumn('internal_path', 'text')
      .addColumn('middlewares', 'jsonb'),
  ).execute();
  // One route per host and path on a server.
  await sql`create unique index domains_server_host_path on domains (coalesce(server_id, ''), host, path)`.execute(db);
  for (const c of ['application_id', 'compose_id', 'preview_deployment_id']) {
    await db.schema.createIndex(`domains_${c}`).on('domains').column(c).execute();
  }

  await created(
    db.schema
      .createTable('preview_deployments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
      .addColumn('app_name', 'text', (c) => c.notNull())
      .addColumn('branch', 'text', (c) => c.notNull())
      .addColumn('pull_request_id', 'text', (c) => c.notNull())
      .addColumn('pull_request_number', 'text', (c) => c.notNull())
      .addColumn('pull_request_url', 'text', (c) => c.notNull())
      .addColumn('pull_request_title', 'text', (c) => c.notNull())
      .addColumn('preview_status', 'text', (c) => c.notNull().defaultTo('idle')),
  ).execute();
  await db.schema.alterTable('domains').addForeignKeyConstraint('domains_preview_fk', ['preview_deployment_id'], 'preview_deployments', ['id'], (c) => c.onDelete('cascade')).execute();
  await db.schema.createIndex('preview_deployments_application').on('preview_deployments').column('application_id').execute();

  await created(
    db.schema
      .createTable('security_entries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addUniqueConstraint('security_entries_application_username', ['application_id', 'username']),
  ).execute();

  await created(
    organizationId(db.schema.createTable('certificates').addColumn('id', 'text', (c) => c.primaryKey()))
      .addColumn('server_id', 'text', (c) => c.references('servers.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('certificate_data', 'text', (c) => c.notNull())
      .addColumn('private_key', 'text', (c) => c.notNull())
      .addColumn('certificate_path', 'text', (c) => c.notNull())
      .addColumn('auto_renew', 'boolean')
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject_names', 'jsonb', (c) => c.notNull())
      .addColumn('not_before', 'timestamptz', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull()),
  ).execute();

  await created(
    organizationId(db.schema.createTable('notifications').addColumn('id', 'text', (c) => c.primaryKey()))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull().unique())
      .addColumn('flags', 'jsonb', (c) => c.notNull())
      .addColumn('config', 'jsonb', (c) => c.notNull())
      .addColumn('secrets', 'text', (c) => c.notNull()),
  ).execute();

  await created(
    organizationId(db.schema.createTable('destinations').addColumn('id', 'text', (c) => c.primaryKey()))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('endpoint', 'text', (c) => c.notNull())
      .addColumn('region', 'text', (c) => c.notNull())
      .addColumn('bucket', 'text', (c) => c.notNull())
      .addColumn('access_key', 'text', (c) => c.notNull())
      .addColumn('secret_key', 'text', (c) => c.notNull()),
  ).execute();

  await created(
    organizationId(db.schema.createTable('backups').addColumn('id', 'text', (c) => c.primaryKey()))
      .addColumn('destination_id', 'text', (c) => c.notNull().references('destinations.id').modifyEnd(sql`deferrable initially deferred`))
      .addColumn('schedule', 'text', (c) => c.notNull())
      .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('keep_latest_count', 'integer')
      .addColumn('database', 'text', (c) => c.notNull())
      .addColumn('database_type', 'text', (c) => c.notNull())
      .addColumn('backup_type', 'text', (c) => c.notNull())
      .addColumn('db_a_id', 'text', (c) => c.references('applications.id').onDelete('cascade'))
      .addColumn('db_b_id', 'text', (c) => c.references('applications.id').onDelete('cascade'))
      .addColumn('db_c_id', 'text', (c) => c.references('applications.id').onDelete('cascade'))
      .addColumn('db_d_id', 'text', (c) => c.references('applications.id').onDelete('cascade'))
      .addColumn('db_e_id', 'text', (c) => c.references('applications.id').onDelete('cascade'))
      .addColumn('compose_id', 'text', (c) => c.references('compose_stacks.id').onDelete('cascade'))
      .addColumn('service_name', 'text')
      .addColumn('user_id', 'text')
      .addColumn('include_encryption_key', 'boolean', (c) => c.notNull().defaultTo(false))
      // Sealed JSON: compose backups keep database credentials here.
      .addColumn('metadata', 'text'),
  ).execute();

  await created(
    organizationId(db.schema.createTable('ai_configs').addColumn('id', 'text', (c) => c.primaryKey()))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('api_url', 'text', (c) => c.notNull())
      .addColumn('api_key', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('is_enabled', 'boolean', (c) => c.notNull()),
  ).execute();

  await created(
    organizationId(db.schema.createTable('git_providers').addColumn('id', 'text', (c) => c.primaryKey()))
      .addColumn('git_provider_id', 'text', (c) => c.notNull().unique())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('auth_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('config', 'jsonb', (c) => c.notNull())
      .addColumn('secrets', 'text', (c) => c.notNull()),
  ).execute();

  // Host settings (settings.*): exactly one row, shared by every organization on this host.
  await db.schema
    .createTable('platform_settings')
    .addColumn('id', 'text', (c) => c.primaryKey().check(sql`id = 'platform'`))
    .addColumn('host', 'text')
    .addColumn('certificate_type', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('lets_encrypt_email', 'text')
    .addColumn('https', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('enable_container_cleanup', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('ssh_private_key', 'text')
    .addColumn('ssh_public_key', 'text')
    .addColumn('updated_at', 'timestamptz')
    .execute();
  await db.insertInto('platform_settings').values({ id: 'platform' }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['platform_settings', 'git_providers', 'ai_configs', 'backups', 'destinations', 'notifications', 'certificates', 'security_entries', 'domains', 'preview_deployments', 'ssh_keys', 'servers']) {
    await db.schema.dropTable(t).execute();
  }
}
