import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { BillingProductConfig } from '@skiff/contracts';
import { z } from 'zod';

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
  billing: BillingConfig;
  /** The platform host's public IP address, for generated (sslip.io) and validated domains. */
  publicIp?: string;
  /** `SKIFF_NATS_URL`: NATS with JetStream for agent commands; unset, deployments stay queued. */
  natsUrl?: string;
  /** `SKIFF_GRPC_HOST` / `SKIFF_GRPC_PORT`: where agents report (127.0.0.1:50051 by default). */
  grpcHost: string;
  grpcPort: number;
}

export function readConfig(env: NodeJS.ProcessEnv, version: string): Config {
  const port = Number(env.SKIFF_PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`SKIFF_PORT is not a port: ${env.SKIFF_PORT}`);
  const grpcPort = Number(env.SKIFF_GRPC_PORT ?? 50051);
  if (!Number.isInteger(grpcPort) || grpcPort < 0 || grpcPort > 65535) throw new Error(`SKIFF_GRPC_PORT is not a port: ${env.SKIFF_GRPC_PORT}`);
  const publicIp = env.SKIFF_PUBLIC_IP?.trim() || undefined;
  if (publicIp && !isIP(publicIp)) throw new Error(`SKIFF_PUBLIC_IP is not an IP address: ${env.SKIFF_PUBLIC_IP}`);
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
    billing: readBillingConfig(env),
    publicIp,
    natsUrl: env.SKIFF_NATS_URL?.trim() || undefined,
    grpcHost: env.SKIFF_GRPC_HOST?.trim() || '127.0.0.1',
    grpcPort,
  };
}

/** What billing answers from: the operator's products, the server limit, the payment provider key. */
export interface BillingConfig {
  /** `SKIFF_BILLING_PRODUCTS`: a JSON list of products (see `BillingProduct`); none by default. */
  products: z.output<typeof BillingProductConfig>[];
  /** `SKIFF_MAX_SERVERS`: how many servers an organization may register; unlimited (null) by default. */
  maxServers: number | null;
  /** `SKIFF_BILLING_API_KEY`: the payment provider's secret key; none by default. */
  apiKey?: string;
}

export function readBillingConfig(env: NodeJS.ProcessEnv): BillingConfig {
  let products: BillingConfig['products'] = [];
  const productsText = env.SKIFF_BILLING_PRODUCTS?.trim();
  if (productsText) {
    let json: unknown;
    try {
      json = JSON.parse(productsText);
    } catch {
      throw new Error('SKIFF_BILLING_PRODUCTS is not JSON');
    }
    const parsed = z.array(BillingProductConfig).safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`SKIFF_BILLING_PRODUCTS: ${issue.path.join('.') || 'value'}: ${issue.message}`);
    }
    products = parsed.data;
  }
  const maxText = env.SKIFF_MAX_SERVERS?.trim();
  const maxServers = maxText ? Number(maxText) : null;
  if (maxServers !== null && (!Number.isInteger(maxServers) || maxServers < 0)) {
    throw new Error(`SKIFF_MAX_SERVERS is not a whole number: ${env.SKIFF_MAX_SERVERS}`);
  }
  return { products, maxServers, apiKey: env.SKIFF_BILLING_API_KEY || undefined };
}
