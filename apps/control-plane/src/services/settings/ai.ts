import type { Contracts, OutputOf } from '@skiff/contracts';
import type { AiConfig } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import type { ServiceDeps } from '../shared/deps.js';
import { RecordCodec } from '../shared/record-codec.js';
import { allOfOrganization, findOfOrganization } from '../shared/organization-records.js';
import { refuseMetadataTarget } from '../shared/target-url.js';

type AiRecord = OutputOf<Contracts['ai']['one']>;

interface AiFields {
  name?: string;
  apiUrl?: string;
  apiKey?: string;
  model?: string;
  isEnabled?: boolean;
}

/**
 * AI configurations (OpenAI-compatible endpoints). Any member reads them; writes are for
 * admins (the contracts say so). The API key is sealed and write-only.
 */
export class AiService {
  private readonly codec: RecordCodec<AiRecord>;

  constructor(private readonly deps: ServiceDeps) {
    this.codec = new RecordCodec<AiRecord>(deps.secrets, { idField: 'aiId', writeOnly: ['apiKey'] });
  }

  private get db() {
    return this.deps.db;
  }

  private record = (row: AiConfig) => this.codec.record(row);

  /** Column values of the fields given; an empty API key is stored empty (no key). */
  private columns(f: AiFields): Record<string, unknown> {
    refuseMetadataTarget('apiUrl', f.apiUrl);
    const { apiKey, ...rest } = f;
    const out = this.codec.columns(rest);
    if (apiKey !== undefined) out.apiKey = apiKey === '' ? '' : this.deps.secrets.seal(apiKey);
    return out;
  }

  async create(p: Principal, input: Required<AiFields>) {
    const row = await this.db
      .insertInto('aiConfigs')
      .values({ id: this.deps.ids('ai'), organizationId: p.organizationId, ...this.columns(input) } as never)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.record(row);
  }

  private async find(p: Principal, aiId: string): Promise<AiConfig> {
    return findOfOrganization(this.db, 'aiConfigs', p, aiId, 'AI configuration');
  }

  /** What calling the configuration's endpoint takes: its URL, model and opened key (never answered to a caller). */
  async endpoint(p: Principal, aiId: string): Promise<{ apiUrl: string; apiKey: string; model: string; isEnabled: boolean }> {
    const row = await this.find(p, aiId);
    return { apiUrl: row.apiUrl, apiKey: row.apiKey ? this.deps.secrets.open(row.apiKey) : '', model: row.model, isEnabled: row.isEnabled };
  }

  async one(p: Principal, aiId: string) {
    return this.record(await this.find(p, aiId));
  }

  async all(p: Principal) {
    return (await allOfOrganization(this.db, 'aiConfigs', p)).map(this.record);
  }

  async update(p: Principal, input: AiFields & { aiId: string; createdAt?: string }) {
    const { aiId, createdAt: _readOnly, ...fields } = input;
    const row = await this.find(p, aiId);
    const columns = this.columns(fields);
    if (Object.keys(columns).length === 0) return this.record(row);
    const updated = await this.db.updateTable('aiConfigs').set(columns).where('id', '=', aiId).returningAll().executeTakeFirstOrThrow();
    return this.record(updated);
  }

  async delete(p: Principal, aiId: string) {
    const row = await this.find(p, aiId);
    await this.db.deleteFrom('aiConfigs').where('id', '=', aiId).execute();
    return this.record(row);
  }
}
