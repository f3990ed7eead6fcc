/**
 * Swarm secrets, through dockerode: made sure of by name. A secret's content cannot change,
 * so callers name each content anew (a hash in the name); an existing one is not rewritten.
 */
import type Dockerode from 'dockerode';
import { MANAGED_LABEL } from './driver.js';
import { checkObjectName, engineCall, isManaged } from './engine.js';
import { DockerConflictError } from './errors.js';

interface EngineSecret {
  ID: string;
  Spec?: { Name?: string; Labels?: Record<string, string> };
}

export async function ensureSecret(docker: Dockerode, name: string, data: string, labels: Record<string, string> = {}): Promise<string> {
  // The content may be a secret: the operation names the secret only.
  const operation = `ensureSecret ${String(name)}`;
  checkObjectName('secret', name, operation);
  const find = async () => {
    const list = (await engineCall(operation, () => docker.listSecrets({ filters: { name: [name] } }))) as unknown as EngineSecret[];
    return list.find((s) => s.Spec?.Name === name) ?? null;
  };
  const existing = await find();
  if (existing) {
    if (!isManaged(existing.Spec?.Labels)) throw new DockerConflictError(operation, `secret ${name} exists and is not managed by Skiff`);
    return existing.ID;
  }
  try {
    const created = (await engineCall(operation, () =>
      docker.createSecret({ Name: name, Labels: { ...labels, [MANAGED_LABEL]: 'true' }, Data: Buffer.from(data).toString('base64') }),
    )) as unknown as { id?: string; ID?: string };
    const id = created.id ?? created.ID;
    if (id) return id;
  } catch (err) {
    // Created by someone else in between: take theirs.
    if (!(err instanceof DockerConflictError)) throw err;
  }
  const again = await find();
  if (!again) throw new DockerConflictError(operation, `secret ${name} could not be created`);
  return again.ID;
}
