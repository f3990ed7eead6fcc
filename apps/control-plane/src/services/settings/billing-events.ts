import type { Db } from '@skiff/db';
import { z } from 'zod';
import { DomainError } from '../../errors.js';

/** The fields of Stripe's event object billing reads; the rest is ignored. */
const Event = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  created: z.number().int().nonnegative(),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});
export type BillingEvent = z.infer<typeof Event>;

const Metadata = z.record(z.string(), z.unknown()).nullish();

const CheckoutSession = z.object({
  client_reference_id: z.string().nullish(),
  customer: z.string().nullish(),
  subscription: z.string().nullish(),
  metadata: Metadata,
});

const Subscription = z.object({
  id: z.string().min(1),
  customer: z.string().min(1),
  status: z.string(),
  metadata: Metadata,
  items: z.object({
    data: z.array(z.object({ quantity: z.number().int().nonnegative().nullish(), price: z.object({ id: z.string() }).nullish() })),
  }),
});

/** Statuses in which the subscription's servers are granted (past_due: the provider still retries the payment). */
const GRANTING = new Set(['active', 'trialing', 'past_due']);

export function parseBillingEvent(rawBody: string): BillingEvent {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    throw new DomainError('BAD_REQUEST', 'The webhook body is not JSON');
  }
  const parsed = Event.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DomainError('BAD_REQUEST', `Not an event: ${issue.path.join('.')}: ${issue.message}`, [{ path: issue.path.map(String), message: issue.message }]);
  }
  return parsed.data;
}

const organizationIdOf = (metadata: z.infer<typeof Metadata>) =>
  typeof metadata?.organizationId === 'string' ? metadata.organizationId : undefined;

async function organizationExists(tx: Db, id: string | undefined | null): Promise<boolean> {
  if (!id) return false;
  // Locked like server.create locks it: an allowance and a server creation do not interleave.
  return (await tx.selectFrom('organizations').select('id').where('id', '=', id).forUpdate().executeTakeFirst()) !== undefined;
}

/**
 * Applies a verified event inside the caller's transaction and says what it did. Events of
 * other types, or about no organization of this platform, change nothing (they are still
 * recorded as received, so the provider stops retrying them).
 */
export async function applyBillingEvent(tx: Db, event: BillingEvent, options: { prices: Set<string>; now: Date }): Promise<string> {
  if (event.type === 'checkout.session.completed') {
    const session = CheckoutSession.safeParse(event.data.object);
    if (!session.success) throw new DomainError('BAD_REQUEST', 'The checkout session in the event has an unexpected shape');
    const organizationId = session.data.client_reference_id ?? organizationIdOf(session.data.metadata);
    const customerId = session.data.customer;
    if (!customerId || !(await organizationExists(tx, organizationId))) return 'nothing (no customer or no organization of this platform)';
    const holder = await tx.selectFrom('billingAccounts').select('organizationId').where('customerId', '=', customerId).executeTakeFirst();
    if (holder && holder.organizationId !== organizationId) return 'nothing (the customer belongs to another organization)';
    await tx
      .insertInto('billingAccounts')
      .values({ organizationId: organizationId!, customerId, subscriptionId: session.data.subscription ?? null, updatedAt: options.now })
      .onConflict((oc) =>
        oc.column('organizationId').doUpdateSet({
          customerId,
          ...(session.data.subscription ? { subscriptionId: session.data.subscription } : {}),
          updatedAt: options.now,
        }),
      )
      .execute();
    return 'customer recorded';
  }
  if (event.type.startsWith('customer.subscription.')) {
    const kind = event.type.slice('customer.subscription.'.length);
    if (kind !== 'created' && kind !== 'updated' && kind !== 'deleted') return `nothing (${event.type} is not handled)`;
    const sub = Subscription.safeParse(event.data.object);
    if (!sub.success) throw new DomainError('BAD_REQUEST', 'The subscription in the event has an unexpected shape');
    const s = sub.data;
    const byCustomer = await tx.selectFrom('billingAccounts').selectAll().where('customerId', '=', s.customer).executeTakeFirst();
    const fromMetadata = organizationIdOf(s.metadata);
    // A customer already kept decides; otherwise the organization the checkout put in the subscription's metadata.
    const organizationId = byCustomer?.organizationId ?? fromMetadata;
    if (!(await organizationExists(tx, organizationId))) return 'nothing (no organization of this platform)';
    const account =
      byCustomer ?? (await tx.selectFrom('billingAccounts').selectAll().where('organizationId', '=', organizationId!).executeTakeFirst());
    if (account?.customerId && account.customerId !== s.customer) return 'nothing (the organization has another customer)';
    // Deliveries may arrive out of order: an event older than the one that set the allowance does not undo it.
    const eventAt = new Date(event.created * 1000);
    if (account?.allowanceEventAt && new Date(account.allowanceEventAt) > eventAt) return 'nothing (a newer event set the allowance)';
    // Another subscription of the same customer ending does not take away the current one's servers.
    if (kind === 'deleted' && account?.subscriptionId && account.subscriptionId !== s.id) return 'nothing (not the current subscription)';
    const servers = s.items.data.filter((item) => item.price && options.prices.has(item.price.id)).reduce((n, item) => n + (item.quantity ?? 0), 0);
    const granted = kind !== 'deleted' && GRANTING.has(s.status) && servers > 0;
    const columns = {
      customerId: s.customer,
      subscriptionId: s.id,
      subscriptionStatus: kind === 'deleted' ? 'canceled' : s.status,
      maxServers: granted ? servers : null,
      allowanceEventAt: eventAt,
      updatedAt: options.now,
    };
    await tx
      .insertInto('billingAccounts')
      .values({ organizationId: organizationId!, ...columns })
      .onConflict((oc) => oc.column('organizationId').doUpdateSet(columns))
      .execute();
    return granted ? `allowance set to ${servers} servers` : 'allowance back to the default';
  }
  return `nothing (${event.type} is not handled)`;
}
