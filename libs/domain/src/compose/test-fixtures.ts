/**
 * Representative compose files for the specs and golden files of this folder. Not part of
 * the library's exports.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'compose');

/**
 * Compares `actual` with libs/domain/src/golden/compose/<name>; `UPDATE_GOLDEN=1` writes it.
 * Review the diff of the golden files before committing.
 */
export function expectGolden(name: string, actual: string): void {
  const file = join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
  }
  if (!existsSync(file)) throw new Error(`missing golden file ${file}; run with UPDATE_GOLDEN=1 to create it`);
  expect(actual).toBe(readFileSync(file, 'utf8'));
}

/** A blog: two services, named volumes, a dependency, Compose interpolation from the .env. */
export const WORDPRESS = `services:
  wordpress:
    image: wordpress:6
    restart: unless-stopped
    depends_on:
      - db
    environment:
      WORDPRESS_DB_HOST: db
      WORDPRESS_DB_USER: \${DB_USER}
      WORDPRESS_DB_PASSWORD: \${DB_PASSWORD}
    volumes:
      - wordpress:/var/www/html
  db:
    image: mariadb:11
    restart: unless-stopped
    environment:
      MARIADB_USER: \${DB_USER}
      MARIADB_PASSWORD: \${DB_PASSWORD}
      MARIADB_RANDOM_ROOT_PASSWORD: "1"
    volumes:
      - db:/var/lib/mysql

volumes:
  wordpress:
  db:
`;

/** Every reference form randomize and isolate must follow, with anchors, comments and tags. */
export const KITCHEN_SINK = `# An application stack with every kind of reference.
x-defaults: &defaults
  restart: unless-stopped
  logging:
    driver: json-file
  networks: [backend]

services:
  web:
    <<: *defaults
    image: registry.local:5000/shop/web:3
    container_name: shop-web
    ports:
      - "8080:80"
    depends_on:
      api:
        condition: service_healthy
      cache:
        condition: service_started
        restart: true
    links:
      - api:backend-api
      - cache
    volumes:
      - static:/srv/static:ro
      - ./nginx.conf:/etc/nginx/nginx.conf:ro
      - /var/cache/nginx
      - type: volume
        source: uploads
        target: /srv/uploads
        volume:
          nocopy: true
      - type: bind
        source: ./certs
        target: /certs
    networks:
      backend:
      frontend:
        aliases:
          - shop
        priority: 100
    environment:
      FEATURE_FLAG: yes
      UMASK: 0022
  api:
    <<: *defaults
    build:
      context: ./api
      secrets:
        - npm_token
      additional_contexts:
        base: service:base
    secrets:
      - db_password
      - source: api_key
        target: /run/secrets/key
        mode: 0400
    configs:
      - app_config
    volumes:
      - type: volume
        source: shared
        target: /shared
      - logs:/var/log/api
    healthcheck:
      test: ["CMD", "wget", "-q", "-O-", "http://127.0.0.1:3000/health"]
  worker:
    extends: api
    command: ["node", "worker.js"]
    volumes_from:
      - api:ro
      - container:legacy-sidecar
    depends_on: [api, cache]
  sidecar:
    image: busybox:1.36
    network_mode: "service:web"
    pid: service:api
  base:
    image: node:22-slim
    volumes: !reset []
  cache:
    image: redis:8
    volumes:
      - cache-data:/data
    networks:
      backend:
        aliases: [redis]
      skiff-network: {}

networks:
  backend:
  frontend:
    driver: bridge
  default:
    name: shop-default
  skiff-network:
    external: true
  legacy:
    external:
      name: legacy-net

volumes:
  static:
  uploads: {}
  logs:
    name: api-logs
  cache-data:
  shared:
    external: true

secrets:
  db_password:
    file: ./secrets/db.txt
  api_key:
    environment: API_KEY
  npm_token:
    file: ./secrets/npm.txt

configs:
  app_config:
    file: ./config.yml
`;

/** A Swarm stack (`docker stack deploy`): overlay network, configs, deploy settings. */
export const SWARM_STACK = `version: "3.8"
services:
  app:
    image: traefik/whoami:v1.10
    deploy:
      replicas: 2
      update_config:
        order: start-first
    configs:
      - source: whoami_conf
        target: /etc/whoami.conf
    networks:
      - internal
  db:
    image: postgres:16
    deploy:
      placement:
        constraints: [node.role == manager]
    volumes:
      - pgdata:/var/lib/postgresql/data
    networks:
      - internal
networks:
  internal:
    driver: overlay
volumes:
  pgdata:
configs:
  whoami_conf:
    file: ./whoami.conf
`;

/** Deterministic stand-in for crypto.randomBytes: a fixed walk through all byte values. */
export function fakeRandom(seed = 7): (size: number) => Uint8Array {
  let state = seed;
  return (size) => {
    const out = new Uint8Array(size);
    for (let i = 0; i < size; i += 1) {
      state = (state * 73 + 41) % 257;
      out[i] = state % 256;
    }
    return out;
  };
}
