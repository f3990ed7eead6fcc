/**
 * Database kinds the spec names as backup targets but whose backups Skiff refuses, with the
 * reason each refusal gives: their records are kept (the spec accepts them), and their
 * runs, restores and verifications answer this reason.
 *
 * libSQL (dbE): the server streams a dump (`GET /dump` of its HTTP API) but loads one only
 * through its admin API into a new namespace (`POST /v1/namespaces/:ns/create` with
 * `dump_url`), which needs `--admin-listen-addr` and `--enable-namespaces`; its HTTP API has
 * no load route, and the image ships no HTTP client nor `sqlite3`. A dump Skiff could not
 * restore nor verify is not a backup.
 */
export const UNSUPPORTED_BACKUP_KINDS: Readonly<Record<string, string>> = {
  dbE:
    'libSQL (dbE) databases cannot be backed up by Skiff: libsql-server loads a dump only into a new namespace through its admin API, ' +
    'which a libSQL service does not run, and its image has no tool to restore one, so such a backup could never be restored nor verified',
};

/** Why backups of `databaseType` are refused, or null. */
export const backupRefusal = (databaseType: string): string | null => UNSUPPORTED_BACKUP_KINDS[databaseType] ?? null;
