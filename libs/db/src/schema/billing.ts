import type { ColumnType } from 'kysely';

type NullableDate = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** An organization's account at the payment provider, written by its webhook events. */
export interface BillingAccountsTable {
  organizationId: string;
  /** The provider's customer id (`cus_…`), from the completed checkout. */
  customerId: Nullable<string>;
  subscriptionId: Nullable<string>;
  subscriptionStatus: Nullable<string>;
  /** The servers paid for; null: the platform's default (SKIFF_MAX_SERVERS). */
  maxServers: Nullable<number>;
  /** When the event that set `maxServers` was created at the provider: an older one arriving later is not applied. */
  allowanceEventAt: NullableDate;
  updatedAt: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** The provider's webhook events already applied (ids), so a replay changes nothing. */
export interface BillingEventsTable {
  eventId: string;
  type: string;
  receivedAt: ColumnType<Date, Date | string | undefined, never>;
}
