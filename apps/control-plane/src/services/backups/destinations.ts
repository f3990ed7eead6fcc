import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Destination } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import { RecordCodec } from '../shared/record-codec.js';
import { refuseMetadataTarget } from '../shared/target-url.js';
import { allOfOrganization, asReference, findOfOrganization } from '../shared/organization-records.js';

type DestinationRecord = OutputOf<Contracts['destination']['one']>;

interface DestinationInput {
  name?: string;
  endpoint?: string;
  region?: string;
  bucket?: string;
  accessKey?: string;
  secretKey?: string;
  encryptionPassphrase?: string | null;
}

/** S3-compatible backup destinations of an organization; both keys sealed, the secret write-only. */
export class DestinationService {
  private readonly codec: RecordCodec<DestinationRecord>;

  constructor(private readonly deps: ServiceDeps) {
    this.codec = new RecordCodec<DestinationRecord>(deps.secrets, {
      idField: 'destinationId',
      sealed: ['accessKey'],
      writeOnly: ['secretKey', 'encryptionPassphrase'],
    });
  }

  private get db() {
    return this.deps.db;
  }

  record = (row: Destination) => this.codec.record(row);

  async create(p: Principal, input: Required<Omit<DestinationInput, 'encryptionPassphrase'>> & Pick<DestinationInput, 'encryptionPassphrase'>) {
    refuseMetadataTarget('endpoint', input.endpoint);
    const row = await this.db
      .insertInto('destinations')
      .values({ id: this.deps.ids('dst'), organizationId: p.organizationId, ...this.codec.columns({ ...input }) } as never)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.record(row as Destination);
  }

  /** A destination of the caller's organization; another organization's is NOT_FOUND. */
  async find(p: Principal, destinationId: string): Promise<Destination> {
    return findOfOrganization(this.db, 'destinations', p, destinationId, 'destination');
  }

  /** The same as `find`, for a `destinationId` in another record's input: failures name the field. */
  reference(p: Principal, destinationId: string, field = 'destinationId'): Promise<Destination> {
    return asReference(field, 'no such destination', () => this.find(p, destinationId));
  }

  async one(p: Principal, destinationId: string) {
    return this.record(await this.find(p, destinationId));
  }

  async all(p: Principal) {
    return (await allOfOrganization(this.db, 'destinations', p)).map(this.record);
  }

  async update(p: Principal, input: DestinationInput & { destinationId: string }) {
    const { destinationId, ...fields } = input;
    const row = await this.find(p, destinationId);
    refuseMetadataTarget('endpoint', fields.endpoint);
    const columns = this.codec.columns(fields);
    if (Object.keys(columns).length === 0) return this.record(row);
    const updated = await this.db
      .updateTable('destinations')
      .set(columns as never)
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.record(updated);
  }

  /** Refused while backups write to it (the foreign key would refuse it too). */
  async remove(p: Principal, destinationId: string) {
    const row = await this.find(p, destinationId);
    const inUse = async () => {
      let count = 0;
      for (const table of ['backups', 'volumeBackups'] as const) {
        const { n } = await this.db
          .selectFrom(table as 'backups')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('destinationId', '=', row.id)
          .executeTakeFirstOrThrow();
        count += Number(n);
      }
      return count;
    };
    const refuse = (n: number) => Invalid('destinationId', `${n} backup${n === 1 ? '' : 's'} still write to this destination`);
    const count = await inUse();
    if (count > 0) throw refuse(count);
    try {
      await this.db.deleteFrom('destinations').where('id', '=', row.id).execute();
    } catch (err) {
      // A backup created meanwhile: the foreign key refused the delete.
      if ((err as { code?: string })?.code === '23503') throw refuse(await inUse());
      throw err;
    }
    return this.record(row);
  }
}
