import type { Principal } from '../../authz/principal.js';
import { iso } from '../shared/deps.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { WebhookDeliveries } from './deliveries.js';
import type { WorkloadKind } from './workloads.js';

/** `application.webhookDeliveries` and `compose.webhookDeliveries`. */
export class WebhookDeliveryReads {
  constructor(
    private readonly access: ServiceAccess,
    private readonly deliveries: WebhookDeliveries,
    private readonly secrets: SecretBox,
  ) {}

  async of(p: Principal, kind: WorkloadKind, id: string) {
    const { row } = await this.access.find(p, kind, id);
    const rows = await this.deliveries.of(kind, id);
    const token = row.refreshToken ? this.secrets.open(row.refreshToken) : null;
    return {
      webhookPath: token ? `/webhooks/deploy/${kind}/${id}/${token}` : null,
      deliveries: rows.map(({ id: webhookDeliveryId, applicationId: _a, composeId: _c, createdAt, source, ...rest }) => ({
        webhookDeliveryId,
        source: source as 'github' | 'gitlab' | 'bitbucket' | 'gitea' | 'token',
        ...rest,
        createdAt: iso(createdAt),
      })),
    };
  }
}
