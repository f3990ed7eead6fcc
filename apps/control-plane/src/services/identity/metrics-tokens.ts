import type { Principal } from '../../authz/principal.js';
import { hashToken } from '../../crypto/tokens.js';
import { randomBytes } from 'node:crypto';
import { Unauthorized } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';

/**
 * The token a monitoring sender presents in the body of notification.receiveNotification,
 * one per organization, created on first read.
 */
export class MetricsTokenService {
  constructor(private readonly deps: ServiceDeps) {}

  async tokenOf(p: Principal) {
    const org = await this.deps.db
      .selectFrom('organizations')
      .select(['metricsToken'])
      .where('id', '=', p.organizationId)
      .executeTakeFirstOrThrow();
    if (org.metricsToken) return { token: this.deps.secrets.open(org.metricsToken) };
    const token = `mtk_${randomBytes(24).toString('base64url')}`;
    await this.deps.db
      .updateTable('organizations')
      .set({ metricsToken: this.deps.secrets.seal(token), metricsTokenHash: hashToken(token) })
      .where('id', '=', p.organizationId)
      .execute();
    return { token };
  }

  /** The organization a token belongs to; UNAUTHORIZED for any other token. */
  async organizationOf(token: string): Promise<string> {
    const org = await this.deps.db
      .selectFrom('organizations')
      .select('id')
      .where('metricsTokenHash', '=', hashToken(token))
      .executeTakeFirst();
    if (!org) throw Unauthorized('Invalid metrics token');
    return org.id;
  }
}
