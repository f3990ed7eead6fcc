import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Destination } from '@skiff/db';
import type { Principal } from '../authz/principal.js';
import { Invalid, NotFound } from '../errors.js';
import type { ServiceDeps } from './deps.js';
import { RecordCodec } from './record-codec.js';
import { refuseMetadataTarget } from './target-url.js';

type DestinationRecord = OutputOf<Contracts['destination']['one']>;

interface DestinationInput {
  name?: string;
  endpoint?: string;
  region?: string;
  bucket?: string;
  accessKey?: string;
  secretKey?: string;
}

/** S3-compatible backup destinations of an organization; both keys sealed, the secret write-only. */
export class DestinationService {
  private readonly codec: RecordCodec<DestinationRecord>;

  constructor(private readonly deps: ServiceDeps) {
    this.codec = new RecordCodec<DestinationRecord>(deps.secrets, {
      idField: 'destinationId',
      sealed: ['accessKey'],
      writeOnly: ['secretKey'],
    });
  }

  private get db() {
    return this.deps.db;
  }

  record = (row: Destination) => this.codec.record(row);

  async create(p: Principal, input: Required<DestinationInput>) {
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
    const row = await this.db.selectFrom('destinations').selectAll().where('id', '=', destinationId).executeTakeFirst();
    if (!row || row.organizationId !== p.organizationId) throw NotFound('No such destination');
    return row;
  }

  /** The same as `find`, for a `destinationId` in another record's input: failures name the field. */
  async reference(p: Principal, destinationId: string, field = 'destinationId'): Promise<Destination> {
    try {
      return await this.find(p, destinationId);
    } catch (err) {
      if ((err as { code?: string }).code === 'NOT_FOUND') throw Invalid(field, 'no such destination');
      throw err;
    }
  }

  async one(p: Principal, destinationId: string) {
    return this.record(await this.find(p, destinationId));
  }

  async all(p: Principal) {
    const rows = await this.db
      .selectFrom('destinations')
      .selectAll()
      .where('organizationId', '=', p.organizationId)
      .orderBy('createdAt')
      .orderBy('id')
      .execute();
    return rows.map(this.record);
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
      const { n } = await this.db
        .selectFrom('backups')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('destinationId', '=', row.id)
        .executeTakeFirstOrThrow();
      return Number(n);
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
