import type { Contracts, OutputOf } from '@skiff/contracts';
import type { SshKey } from '@skiff/db';
import { generateEd25519SshKeyPair, readSshKeyPair, sshFingerprint } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import { allOfOrganization, findOfOrganization } from '../shared/organization-records.js';

type SshKeyRecord = OutputOf<Contracts['sshKey']['one']>;

const record = (row: SshKey): SshKeyRecord => ({
  sshKeyId: row.id,
  organizationId: row.organizationId,
  name: row.name,
  description: row.description,
  publicKey: row.publicKey,
  keyType: row.publicKey.split(' ')[0]!,
  fingerprint: sshFingerprint(row.publicKey),
  createdAt: new Date(row.createdAt).toISOString(),
});

/**
 * SSH key pairs for git over SSH. Every operation needs `canAccessToSSHKeys` (on the
 * contracts); keys are shared by the organization. Private keys are sealed and never returned.
 */
export class SshKeyService {
  constructor(private readonly deps: ServiceDeps) {}

  private get db() {
    return this.deps.db;
  }

  private async insert(
    p: Principal,
    input: { name: string; description?: string | null },
    publicKey: string,
    privateKey: string,
    id = this.deps.ids('ssh'),
  ) {
    const row = await this.db
      .insertInto('sshKeys')
      .values({
        id,
        organizationId: p.organizationId,
        name: input.name,
        description: input.description ?? null,
        publicKey,
        privateKey: this.deps.secrets.seal(privateKey),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return record(row);
  }

  /** Stores a pair given by the user, once both keys read and belong together. */
  async create(p: Principal, input: { name: string; description?: string | null; publicKey: string; privateKey: string }) {
    const read = readSshKeyPair(input.publicKey, input.privateKey);
    if (!read.ok) throw Invalid(read.field, read.message);
    const privateKey = input.privateKey.trim() + '\n';
    return this.insert(p, input, read.pair.publicKey, privateKey);
  }

  /** Generates an ed25519 pair; only its public half ever leaves the platform. */
  async generate(p: Principal, input: { name: string; description?: string | null }) {
    const id = this.deps.ids('ssh');
    const pair = generateEd25519SshKeyPair(`skiff-${id}`);
    return this.insert(p, input, pair.publicKey, pair.privateKey, id);
  }

  private async find(p: Principal, sshKeyId: string): Promise<SshKey> {
    return findOfOrganization(this.db, 'sshKeys', p, sshKeyId, 'SSH key');
  }

  async one(p: Principal, sshKeyId: string) {
    return record(await this.find(p, sshKeyId));
  }

  async all(p: Principal) {
    return (await allOfOrganization(this.db, 'sshKeys', p)).map(record);
  }

  async update(p: Principal, input: { sshKeyId: string; name?: string; description?: string | null }) {
    const row = await this.find(p, input.sshKeyId);
    const changes: Record<string, unknown> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = input.description;
    if (Object.keys(changes).length === 0) return record(row);
    return record(await this.db.updateTable('sshKeys').set(changes).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow());
  }

  /** Removes a key no application or compose stack clones with. */
  async remove(p: Principal, sshKeyId: string) {
    const row = await this.find(p, sshKeyId);
    for (const [table, what] of [
      ['applications', 'applications'],
      ['composeStacks', 'compose stacks'],
    ] as const) {
      const users = await this.db.selectFrom(table).select('name').where('customGitSSHKeyId', '=', row.id).orderBy('name').execute();
      if (users.length) {
        throw Invalid('sshKeyId', `still used by ${what} ${users.map((u) => u.name).join(', ')}; change their git source first`);
      }
    }
    await this.db.deleteFrom('sshKeys').where('id', '=', row.id).execute();
    return record(row);
  }
}
