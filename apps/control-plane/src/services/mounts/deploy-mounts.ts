import type { Db } from '@skiff/db';
import type { VolumeInput } from '@skiff/domain';
import type { FileMount } from '@skiff/proto';
import type { SecretBox } from '../../crypto/secret-box.js';
import { assertBindAllowed } from './mounts.js';

/** What an application's mounts add to one deploy: the spec's volumes and binds, and the command's files (contents are secrets). */
export interface DeployMounts {
  volumes: VolumeInput[];
  binds: VolumeInput[];
  files: FileMount[];
}

/**
 * The application's mounts as its deploy sends them, read in the deploy's transaction. Host
 * binds are checked against the organization's trust again (it may have been withdrawn since
 * they were saved): BAD_REQUEST naming `mounts`.
 */
export async function deployMounts(
  tx: Db,
  secrets: SecretBox,
  app: { id: string; serverId: string | null },
  organizationId: string,
): Promise<DeployMounts> {
  const rows = await tx.selectFrom('applicationMounts').selectAll().where('applicationId', '=', app.id).orderBy('createdAt').orderBy('id').execute();
  const result: DeployMounts = { volumes: [], binds: [], files: [] };
  for (const row of rows) {
    if (row.type === 'volume' && row.volumeName) result.volumes.push({ source: row.volumeName, target: row.mountPath });
    if (row.type === 'bind' && row.hostPath) result.binds.push({ source: row.hostPath, target: row.mountPath });
    if (row.type === 'file' && row.filePath) {
      const content = row.content === null ? '' : row.secret ? secrets.open(row.content) : row.content;
      result.files.push({ path: row.filePath, content, target: row.mountPath });
    }
  }
  if (result.binds.length > 0) await assertBindAllowed(tx, organizationId, app.serverId, 'mounts');
  return result;
}
