/**
 * The compose file as it runs on this server: the stored file converted as
 * `compose.getConvertedCompose` shows it (libs/domain convertedCompose: randomize, isolate, the
 * platform network for routed services), then the server's own rewrites:
 * 1. relative bind mounts moved to the stack's `files/` (keepBindMounts), so redeploys keep
 *    what services write there;
 * 2. Skiff's labels on every service (`labels`; a Swarm stack also `deploy.labels`), so the
 *    stack's containers and services are found like every Skiff workload;
 * 3. a Swarm stack gets `version: "3.9"` when it has none (Docker 20.10's `docker stack deploy`
 *    needs one).
 * Pure; a file that cannot be converted throws ComposeError with the reason.
 */
import { posix } from 'node:path';
import {
  type ComposeFile,
  type ComposeTypeName,
  composeServiceNames,
  convertedCompose,
  keepBindMounts,
  type KeptMount,
  labelComposeServices,
  serializeCompose,
  withStackVersion,
} from '@skiff/domain';
import type { ComposeConversion } from '@skiff/proto';

export interface DeployedFileInput {
  /** The compose file's text as fetched. */
  text: string;
  type: ComposeTypeName;
  appName: string;
  /** The workload id (`skiff.id`). */
  id: string;
  conversion: ComposeConversion | undefined;
  /** Absolute paths on the server: the stack's `code/` and `files/`, and the compose file's path inside `code/`. */
  codeDir: string;
  filesDir: string;
  composePath: string;
}

export interface DeployedFile {
  text: string;
  /** The relative bind mounts, now under `files/`. */
  kept: KeptMount[];
  /** The services, as named in the deployed file (randomized names included). */
  services: ServiceOutline[];
}

export interface ServiceOutline {
  name: string;
  /** Compose profiles the service belongs to (it starts only when one is active); empty: always. */
  profiles: string[];
  /** `scale` or `deploy.replicas` when the file sets it, else null. */
  replicas: number | null;
}

export function deployedFile(input: DeployedFileInput): DeployedFile {
  const conversion = input.conversion;
  const converted = convertedCompose(input.text, {
    appName: input.appName,
    randomize: conversion?.randomize ?? false,
    suffix: conversion?.suffix || null,
    isolatedDeployment: conversion?.isolated ?? false,
    isolatedDeploymentsVolume: conversion?.isolatedVolumes ?? false,
    routedServices: conversion?.routedServices ?? [],
  });
  const { file: mounted, kept } = keepBindMounts(converted, {
    sourceDir: input.codeDir,
    composeDir: posix.dirname(posix.join(input.codeDir, input.composePath)),
    keptDir: input.filesDir,
  });
  const swarm = input.type === 'stack';
  let file = labelComposeServices(mounted, { 'skiff.managed': 'true', 'skiff.kind': 'compose', 'skiff.id': input.id }, { swarm });
  if (swarm) file = withStackVersion(file);
  return { text: serializeCompose(file), kept, services: outline(file) };
}

function outline(file: ComposeFile): ServiceOutline[] {
  const services = (file.document.toJS({ maxAliasCount: 1000 }) as { services?: Record<string, unknown> } | null)?.services ?? {};
  return composeServiceNames(file).map((name) => {
    const definition = (services[name] ?? {}) as { profiles?: unknown; scale?: unknown; deploy?: { replicas?: unknown } | null };
    const profiles = Array.isArray(definition.profiles) ? definition.profiles.map(String) : [];
    const count = definition.deploy?.replicas ?? definition.scale;
    const replicas = typeof count === 'string' && /^\d+$/.test(count) ? Number(count) : null;
    return { name, profiles, replicas };
  });
}
