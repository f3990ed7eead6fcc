import { isImageReference } from '@skiff/domain';
import type { SecretBox } from '../../crypto/secret-box.js';
import { Invalid } from '../../errors.js';
import { checkInteger, checkReplicas, checkResources } from '../shared/field-rules.js';
import { RecordCodec } from '../shared/record-codec.js';

type Values = Record<string, unknown>;

const CLUSTER = [
  'healthCheckCluster', 'restartPolicyCluster', 'placementCluster', 'updateConfigCluster',
  'rollbackConfigCluster', 'modeCluster', 'labelsCluster', 'networkCluster',
  'stopGracePeriodCluster', 'endpointSpecCluster', 'ulimitsCluster',
] as const;

/** Docker's rule for network names (and ids, which are hex). */
const NETWORK_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/** The record mapping of a stateful service: its variables sealed, its passwords write-only. */
export function statefulCodec<R>(secrets: SecretBox, idField: string, passwords: readonly string[]): RecordCodec<R> {
  return new RecordCodec<R>(secrets, {
    idField,
    blankWhenNull: ['env'],
    sealed: ['env'],
    writeOnly: passwords,
    json: ['args', 'networkIds', ...CLUSTER],
    // The deploys' forceUpdate counter (deployment records and commands are pruned): internal.
    hidden: ['deployCount'],
  });
}

/** Passwords given must be non-empty and free of control characters. */
export function checkPasswords(f: Values, fields: readonly string[]) {
  for (const field of fields) {
    const value = f[field];
    if (typeof value !== 'string') continue;
    if (value === '') throw Invalid(field, 'must not be empty');
    if (/[\u0000-\u001f\u007f]/.test(value)) throw Invalid(field, 'must not contain control characters');
  }
}

/** The deploy settings' rules beyond the contract's field shapes, each failure naming its field. */
export function checkDeploySettings(f: Values, imageExample: string) {
  if (typeof f.containerImage === 'string' && !isImageReference(f.containerImage)) {
    throw Invalid('containerImage', `must be an image reference such as ${imageExample}`);
  }
  checkInteger(f, 'externalPort', 1, 65535);
  checkReplicas(f);
  checkResources(f);
  if (Array.isArray(f.networkIds)) {
    const bad = (f.networkIds as string[]).find((n) => !NETWORK_NAME.test(n));
    if (bad !== undefined) throw Invalid('networkIds', `${JSON.stringify(bad)} is not a Docker network name or id`);
  }
}
