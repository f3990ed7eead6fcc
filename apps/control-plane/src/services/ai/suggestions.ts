/**
 * What `ai.suggest` asks a model for, and the checks a suggestion passes before anyone sees
 * it, the same ones `ai.deploy` applies to what it is sent: the compose file parses and
 * converts as a deploy would convert it, uses no host privileges where the server refuses
 * them, the env is dotenv text, and every domain is a host routed to a service of the file.
 */
import {
  type ComposeDeploySettings,
  ComposeError,
  type ProcessedTemplate,
  checkRoutePath,
  composeServiceNames,
  convertedCompose,
  describeHostPrivilege,
  hostPrivileges,
  normalizeHost,
  parseDotenv,
  trimChar,
} from '@skiff/domain';
import { z } from 'zod';
import { cleanConfigPath, configFilesProblem } from '../compose/config-files.js';

/** Suggestions asked for per request. */
export const SUGGESTION_COUNT = 3;

/** The structured output the model must follow (OpenAI strict mode: every property required, none added). */
export const SUGGESTIONS_SCHEMA: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['suggestions'],
  properties: {
    suggestions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'shortDescription', 'dockerCompose', 'envVariables', 'domains', 'configFiles'],
        properties: {
          id: { type: 'string', description: 'short lowercase slug, e.g. umami-postgres' },
          name: { type: 'string' },
          shortDescription: { type: 'string' },
          dockerCompose: { type: 'string', description: 'a complete compose file (YAML)' },
          envVariables: { type: 'string', description: 'KEY=VALUE lines' },
          domains: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['host', 'port', 'serviceName'],
              properties: { host: { type: 'string' }, port: { type: 'integer' }, serviceName: { type: 'string' } },
            },
          },
          configFiles: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['filePath', 'content'],
              properties: { filePath: { type: 'string' }, content: { type: 'string' } },
            },
          },
        },
      },
    },
  },
};

export function systemPrompt(): string {
  return [
    "You are the deployment assistant of Skiff, a self-hosted platform that runs Docker Compose stacks.",
    `For the user's request, propose up to ${SUGGESTION_COUNT} different ways to run it, each a complete, working stack.`,
    'For each suggestion give:',
    '- id: a short lowercase slug (letters, digits, hyphens);',
    '- name: a short title; shortDescription: one sentence;',
    '- dockerCompose: a complete compose file in YAML with a top-level `services` map. Use official public images with a pinned',
    '  version tag, named volumes for data, `${VAR}` references for passwords and secrets. Do not use `container_name`,',
    '  `privileged`, `network_mode: host`, host paths or the Docker socket. Do not publish ports for web interfaces:',
    '  Skiff routes domains to them;',
    '- envVariables: the variables the file references, as KEY=VALUE lines; generate long random values for passwords;',
    '- domains: for each web interface, `host` (a placeholder under example.com the user will replace), `port` (the port',
    '  the service listens on inside its container) and `serviceName` (the compose service);',
    '- configFiles: configuration files a service needs and no environment variable can replace, each a `filePath`',
    '  relative to the compose file (e.g. `nginx/default.conf`) and its `content`; the compose file mounts each with a',
    '  relative bind path (`./nginx/default.conf:/etc/nginx/conf.d/default.conf:ro`). An empty list when none is needed.',
  ].join('\n');
}

/** A suggestion as answered: the fields of `ai.deploy`, ready to be sent back with an environmentId. */
export type Suggestion = {
  id: string;
  name: string;
  description: string;
  containerCompose: string;
  envVariables: string;
  domains: { host: string; port: number; serviceName: string }[];
  configFiles: { filePath: string; content: string }[];
};

const RawSuggestion = z.object({
  id: z.string(),
  name: z.string().trim().min(1).max(200),
  shortDescription: z.string().max(2000),
  dockerCompose: z.string().min(1).max(256 * 1024),
  envVariables: z.string().max(64 * 1024),
  domains: z.array(z.object({ host: z.string(), port: z.number(), serviceName: z.string() })).max(20),
  configFiles: z.array(z.object({ filePath: z.string(), content: z.string() })).max(20),
});

/** What a deploy (or a suggestion) holds, with the field names of `ai.deploy`. */
export interface Deployable {
  containerCompose: string;
  envVariables: string;
  domains?: { host: string; port?: number; serviceName: string; path?: string }[];
  configFiles?: { filePath: string; content: string }[];
}

export interface Problem {
  field: string;
  message: string;
}

/**
 * The model's answer as suggestions: those that fail a check are left out, each with the
 * reason in `dropped` (for the caller's error when none is left, and the log).
 */
export function suggestionsOf(answer: unknown, check: (d: Deployable) => Problem | null): { kept: Suggestion[]; dropped: string[] } {
  const list = typeof answer === 'object' && answer !== null ? (answer as { suggestions?: unknown }).suggestions : undefined;
  if (!Array.isArray(list)) return { kept: [], dropped: ['the answer has no "suggestions" list'] };
  const kept: Suggestion[] = [];
  const dropped: string[] = [];
  const ids = new Set<string>();
  for (const [index, raw] of list.slice(0, SUGGESTION_COUNT * 2).entries()) {
    const parsed = RawSuggestion.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      dropped.push(`suggestion ${index + 1}: ${issue.path.join('.') || 'it'}: ${issue.message}`);
      continue;
    }
    const s = parsed.data;
    const suggestion: Suggestion = {
      id: uniqueId(slug(s.id) || slug(s.name) || `suggestion-${index + 1}`, ids),
      name: s.name,
      description: s.shortDescription.trim(),
      containerCompose: s.dockerCompose,
      envVariables: s.envVariables,
      domains: s.domains.map((d) => ({ host: d.host.trim(), port: d.port, serviceName: d.serviceName.trim() })),
      configFiles: s.configFiles,
    };
    const problem = check(suggestion);
    if (problem) {
      dropped.push(`suggestion ${index + 1} (${suggestion.id}): ${problem.field}: ${problem.message}`);
      continue;
    }
    kept.push(suggestion);
  }
  return { kept: kept.slice(0, SUGGESTION_COUNT), dropped };
}

/**
 * The first problem of a deployable, naming the `ai.deploy` field; null when it would deploy.
 * `appName` is the stack's name as the conversion uses it.
 */
export function deployableProblem(d: Deployable, options: { appName: string; allowHostPrivileges: boolean }): Problem | null {
  const compose = (message: string): Problem => ({ field: 'containerCompose', message });
  let services: string[];
  try {
    services = composeServiceNames(d.containerCompose);
  } catch (err) {
    if (err instanceof ComposeError) return compose(err.message);
    throw err;
  }
  if (services.length === 0) return compose('defines no services');
  if (!options.allowHostPrivileges) {
    const found = hostPrivileges(d.containerCompose);
    if (found.length > 0) return compose(describeHostPrivilege(found[0]!));
  }
  const env = parseDotenv(d.envVariables);
  if (env.issues.length > 0) return { field: 'envVariables', message: `line ${env.issues[0]!.line}: ${env.issues[0]!.message}` };
  for (const [index, domain] of (d.domains ?? []).entries()) {
    const at = (message: string): Problem => ({ field: 'domains', message: `domains[${index}]: ${message}` });
    const host = normalizeHost(domain.host);
    if (!host.ok) return at(`host ${host.reason}`);
    if (host.value.startsWith('*.')) return at('host must be a single host name, not a wildcard');
    if (domain.port !== undefined && (!Number.isInteger(domain.port) || domain.port < 1 || domain.port > 65535)) return at('port must be a whole number from 1 to 65535');
    if (!services.includes(domain.serviceName)) return at(`the compose file defines no service ${JSON.stringify(domain.serviceName)}`);
    if (domain.path !== undefined) {
      const path = checkRoutePath(domain.path);
      if (!path.ok) return at(`path ${path.reason}`);
    }
  }
  const files = configFilesProblem(d.configFiles ?? []);
  if (files) return { field: 'configFiles', message: files };
  const settings: ComposeDeploySettings = {
    appName: options.appName,
    randomize: false,
    suffix: null,
    isolatedDeployment: false,
    isolatedDeploymentsVolume: false,
    routedServices: (d.domains ?? []).map((x) => x.serviceName),
  };
  try {
    convertedCompose(d.containerCompose, settings);
  } catch (err) {
    if (err instanceof ComposeError) return compose(err.message);
    throw err;
  }
  return null;
}

/** A checked deployable as the compose template path stores it (a domain's port defaults to 80). */
export function processedOf(d: Deployable): ProcessedTemplate {
  return {
    compose: d.containerCompose,
    env: d.envVariables,
    domains: (d.domains ?? []).map((x) => ({ host: x.host, port: x.port ?? 80, serviceName: x.serviceName, path: x.path ?? null })),
    mounts: (d.configFiles ?? []).map((f) => ({ filePath: cleanConfigPath(f.filePath), content: f.content })),
  };
}

function slug(text: string): string {
  return trimChar(text.toLowerCase().replace(/[^a-z0-9]+/g, '-'), '-').slice(0, 48);
}

function uniqueId(id: string, taken: Set<string>): string {
  let candidate = id;
  for (let n = 2; taken.has(candidate); n++) candidate = `${id}-${n}`;
  taken.add(candidate);
  return candidate;
}
