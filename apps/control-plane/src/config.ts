import { resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  secretKey?: string;
  ownerEmail: string;
  ownerName: string;
  logLevel: string;
  version: string;
}

export function readConfig(env: NodeJS.ProcessEnv, version: string): Config {
  const port = Number(env.SKIFF_PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`SKIFF_PORT is not a port: ${env.SKIFF_PORT}`);
  return {
    port,
    host: env.SKIFF_HOST ?? '127.0.0.1',
    dataDir: resolve(env.SKIFF_DATA_DIR ?? '.data'),
    databaseUrl: env.DATABASE_URL || undefined,
    secretKey: env.SKIFF_SECRET_KEY || undefined,
    ownerEmail: env.SKIFF_OWNER_EMAIL ?? 'owner@skiff.local',
    ownerName: env.SKIFF_OWNER_NAME ?? 'Owner',
    logLevel: env.LOG_LEVEL ?? 'info',
    version,
  };
}
