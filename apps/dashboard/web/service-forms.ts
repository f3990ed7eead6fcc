// What the workload, environment and backup forms send: the form's strings turned into the
// operation's body (numbers as numbers, an empty optional field left out).

export type Cert = 'none' | 'acme' | 'custom';
export interface DomainForm { host: string; path: string; port: string; https: boolean; certificateType: Cert }
export const blankDomain = (): DomainForm => ({ host: '', path: '/', port: '3000', https: true, certificateType: 'acme' });

/** A port or count typed in a form: a number when it is one, else the text, which the API refuses naming the field. */
const numberOr = (v: string) => (/^\d+$/.test(v.trim()) ? Number(v.trim()) : v);

/** domain.create's body for an application's domain; without HTTPS there is no certificate. */
export function domainBody(applicationId: string, f: DomainForm) {
  return {
    applicationId,
    host: f.host.trim(),
    path: f.path.trim() || null,
    port: f.port.trim() === '' ? null : (numberOr(f.port) as number),
    https: f.https,
    certificateType: f.https ? f.certificateType : ('none' as const),
  };
}

export const ENGINES = [
  { router: 'dbA', label: 'PostgreSQL', image: 'postgres:17' },
  { router: 'dbB', label: 'MariaDB', image: 'mariadb:11' },
  { router: 'dbC', label: 'MySQL', image: 'mysql:8' },
  { router: 'dbD', label: 'MongoDB', image: 'mongo:7' },
  { router: 'dbE', label: 'libSQL', image: 'ghcr.io/tursodatabase/libsql-server' },
] as const;
export type Engine = (typeof ENGINES)[number]['router'];

export interface DatabaseForm { engine: Engine; name: string; containerImage: string; databaseName: string; databaseUser: string; databasePassword: string }
export const blankDatabase = (): DatabaseForm => ({ engine: 'dbA', name: '', containerImage: '', databaseName: '', databaseUser: '', databasePassword: '' });

/**
 * `<engine>.create`'s body. Empty fields are left out: the API then takes the engine's image,
 * `app` as database and user, and generates the password. libSQL takes no database name nor user.
 */
export function databaseBody(environmentId: string, f: DatabaseForm) {
  const body: Record<string, string> = { name: f.name.trim(), environmentId };
  const optional = { containerImage: f.containerImage.trim(), databasePassword: f.databasePassword, ...(f.engine === 'dbE' ? {} : { databaseName: f.databaseName.trim(), databaseUser: f.databaseUser.trim() }) };
  for (const [k, v] of Object.entries(optional)) if (v !== '') body[k] = v;
  return body;
}

export interface ScheduleForm { destinationId: string; schedule: string; prefix: string; keepLatestCount: string; enabled: boolean }
export const blankSchedule = (): ScheduleForm => ({ destinationId: '', schedule: '0 3 * * *', prefix: 'backups/', keepLatestCount: '', enabled: true });

/** The fields backup.create and volumeBackup.create share; an empty "keep" keeps every file. */
export function scheduleBody(f: ScheduleForm) {
  return {
    destinationId: f.destinationId,
    schedule: f.schedule.trim(),
    prefix: f.prefix.trim(),
    keepLatestCount: f.keepLatestCount.trim() === '' ? null : (numberOr(f.keepLatestCount) as number),
    enabled: f.enabled,
  };
}
