import { useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { type Me, isAdmin } from '../me.js';
import { type ScheduleForm, blankSchedule, scheduleBody } from '../service-forms.js';
import { Check, Field, NoticeLine, Panel, bytes, useAction, useLoad, when } from '../ui.js';
import { findDatabase } from './database.js';
import { ScheduleFields } from './schedule-fields.js';

type Backup = {
  backupId: string; destinationId: string; schedule: string; enabled: boolean; prefix: string; database: string;
  databaseType: string; backupType: string; serviceName: string | null;
  dbAId: string | null; dbBId: string | null; dbCId: string | null; dbDId: string | null; dbEId: string | null; composeId: string | null;
};
type BackupFile = { key: string; name: string; size?: number; lastModified?: string };

/** The manual-run operation of each target kind. */
function manualRun(b: Backup) {
  if (b.backupType === 'compose') return '/api/backup.manualBackupCompose' as const;
  const byType = { dbA: '/api/backup.manualBackupDbA', dbB: '/api/backup.manualBackupDbB', dbC: '/api/backup.manualBackupDbC', dbD: '/api/backup.manualBackupDbD', dbE: '/api/backup.manualBackupDbE', 'web-server': '/api/backup.manualBackupWebServer' } as const;
  return byType[b.databaseType as keyof typeof byType];
}

/** Only database services' dumps can be restored (backup.restore): not compose stacks, nor the platform backup. */
const restorable = (b: Backup) => b.backupType !== 'compose' && ['dbA', 'dbB', 'dbC', 'dbD', 'dbE'].includes(b.databaseType);

/** Destinations (S3 buckets) and the organization's backups with their runs; `database` narrows to one database service. */
export function BackupsPage({ api, me, database }: { api: Api; me: Me; database?: string }) {
  if (isAdmin(me)) return <AllBackups api={api} database={database} />;
  return (
    <section>
      <h1 tabIndex={-1}>Backups</h1>
      <p>Backups and their destinations are managed by the organization's admins.</p>
    </section>
  );
}

function AllBackups({ api, database }: { api: Api; database?: string }) {
  const backups = useLoad(() => ok(api.GET('/api/user.getBackups')), []);
  const shown = (list: Backup[]) => (database ? list.filter((b) => [b.dbAId, b.dbBId, b.dbCId, b.dbDId, b.dbEId].includes(database)) : list);
  return (
    <section>
      <h1 tabIndex={-1}>Backups</h1>
      <Destinations api={api} />
      {database && <NewDatabaseBackup api={api} databaseId={database} onCreated={backups.reload} />}
      <Panel title={database ? 'Backups of this database' : 'Backups'}>
        {!database && <p class="hint">To schedule a database's backup, open Backups from the database's page.</p>}
        {backups.view((list) => shown(list).length === 0 ? <p>No backup scheduled.</p> : (
          <ul class="cards">
            {shown(list).map((b) => <BackupItem key={b.backupId} api={api} backup={b} />)}
          </ul>
        ))}
      </Panel>
    </section>
  );
}

function BackupItem({ api, backup: b }: { api: Api; backup: Backup }) {
  const [open, setOpen] = useState(false);
  const action = useAction();
  const run = manualRun(b);
  const target = b.backupType === 'compose' ? `${b.serviceName} in a compose stack` : b.databaseType === 'web-server' ? 'the platform' : `${b.databaseType} database ${b.database}`;
  return (
    <li>
      <strong>{target}</strong> <span class="muted">· {b.schedule}{b.enabled ? '' : ' (paused)'} · {b.prefix || '/'}</span>
      <div class="actions">
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>Runs<span class="sr-only"> of {target}</span></button>
        {run && <button type="button" onClick={() => void action.run('Backup started', () => ok(api.POST(run, { body: { backupId: b.backupId } })))}>Run now<span class="sr-only"> {target}</span></button>}
      </div>
      <NoticeLine notice={action.notice} />
      {open && <Runs api={api} backup={b} />}
    </li>
  );
}

/** The files a backup's runs wrote (`<prefix><backupId>/<time>.<ext>`), newest first, each restorable. */
function Runs({ api, backup: b }: { api: Api; backup: Backup }) {
  const files = useLoad(async () => {
    const list = (await ok(api.GET('/api/backup.listBackupFiles', { params: { query: { destinationId: b.destinationId, search: `${b.prefix}${b.backupId}/` } } }))) as BackupFile[];
    return list.sort((x, y) => y.key.localeCompare(x.key));
  }, [b.backupId]);
  const [restoring, setRestoring] = useState<string | null>(null);
  const file = files.data?.find((f) => f.key === restoring);
  return files.view((list) => list.length === 0 ? <p>No run yet.</p> : (
    <>
    <table>
      <thead><tr><th scope="col">File</th><th scope="col">Size</th><th scope="col">Written</th><th scope="col"><span class="sr-only">Restore</span></th></tr></thead>
      <tbody>
        {list.map((f) => (
          <tr key={f.key}>
            <td>{f.name}</td>
            <td>{f.size !== undefined ? bytes(f.size) : ''}</td>
            <td>{when(f.lastModified)}</td>
            <td>
              {restorable(b) && <button type="button" aria-pressed={restoring === f.key} onClick={() => setRestoring(f.key)}>Restore…<span class="sr-only"> {f.name}</span></button>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
    {file && <Restore key={file.key} api={api} backup={b} file={file} onClose={() => setRestoring(null)} />}
    </>
  ));
}

/**
 * backup.restore replaces the database's content and requires `force: true`: the user confirms
 * by ticking what will happen, then the restore is followed (`backup.oneRestore`) until it ends.
 */
function Restore({ api, backup: b, file, onClose }: { api: Api; backup: Backup; file: BackupFile; onClose: () => void }) {
  const [confirmed, setConfirmed] = useState(false);
  const action = useAction();
  const restore = async (e: Event) => {
    e.preventDefault();
    await action.run((r) => `Restore ${r.status}`, async () => {
      const queued = await ok(api.POST('/api/backup.restore', { body: { backupId: b.backupId, key: file.key, force: confirmed } }));
      for (let i = 0; i < 120; i++) {
        const now = await ok(api.GET('/api/backup.oneRestore', { params: { query: { restoreId: queued.restoreId } } }));
        if (now.status !== 'running') {
          if (now.status === 'error') throw new Error(`Restore failed: ${now.log ?? ''}`);
          return now;
        }
        await new Promise((r) => setTimeout(r, 2000));
      }
      return { status: 'still running' };
    });
  };
  return (
    <form onSubmit={restore} class="confirm">
      <Check label={`Replace the data of ${b.database} with ${file.name}`} checked={confirmed} onChange={setConfirmed} />
      <button type="submit" disabled={!confirmed}>Restore</button> <button type="button" onClick={onClose}>Cancel</button>
      <NoticeLine notice={action.notice} />
    </form>
  );
}

const EMPTY = { name: '', endpoint: '', region: 'us-east-1', bucket: '', accessKey: '', secretKey: '' };

/** S3-compatible destinations: listed (the secret key never comes back), created, their connection tried before saving. */
function Destinations({ api }: { api: Api }) {
  const destinations = useLoad(() => ok(api.GET('/api/destination.all')), []);
  const [form, setForm] = useState(EMPTY);
  const action = useAction();
  const set = (k: keyof typeof EMPTY) => (v: string) => setForm({ ...form, [k]: v });
  const create = (e: Event) => {
    e.preventDefault();
    void action.run((d) => `Destination ${d.name} created`, async () => {
      const created = await ok(api.POST('/api/destination.create', { body: form }));
      setForm(EMPTY);
      destinations.reload();
      return created;
    });
  };
  return (
    <Panel title="Destinations">
      {destinations.view((list) => list.length === 0 ? <p>No destination yet.</p> : (
        <table>
          <thead><tr><th scope="col">Name</th><th scope="col">Bucket</th><th scope="col">Endpoint</th><th scope="col">Region</th></tr></thead>
          <tbody>
            {list.map((d) => <tr key={d.destinationId}><td>{d.name}</td><td>{d.bucket}</td><td>{d.endpoint}</td><td>{d.region}</td></tr>)}
          </tbody>
        </table>
      ))}
      <form class="inline" onSubmit={create} aria-label="New destination">
        <h3>New destination</h3>
        <Field label="Destination name" value={form.name} onInput={set('name')} required />
        <Field label="Endpoint URL" value={form.endpoint} onInput={set('endpoint')} required placeholder="https://s3.example.com" />
        <Field label="Region" value={form.region} onInput={set('region')} required />
        <Field label="Bucket" value={form.bucket} onInput={set('bucket')} required />
        <Field label="Access key" value={form.accessKey} onInput={set('accessKey')} required />
        <Field label="Secret key" type="password" value={form.secretKey} onInput={set('secretKey')} required />
        <button type="button" onClick={() => void action.run('Connection works: the bucket was listed and written', () => ok(api.POST('/api/destination.testConnection', { body: form })))}>Test connection</button>
        <button type="submit">Create destination</button>
        <NoticeLine notice={action.notice} />
      </form>
    </Panel>
  );
}

/** A backup schedule of one database service (backup.create, its engine's `db*Id`), dumping the database it names. */
function NewDatabaseBackup({ api, databaseId, onCreated }: { api: Api; databaseId: string; onCreated: () => void }) {
  const data = useLoad(async () => {
    const [found, destinations] = await Promise.all([findDatabase(api, databaseId), ok(api.GET('/api/destination.all'))]);
    return { ...found, destinations };
  }, [databaseId]);
  const [form, setForm] = useState<ScheduleForm>(blankSchedule);
  const [name, setName] = useState<string | null>(null);
  const action = useAction();
  return (
    <Panel title="New backup schedule">
      {data.view(({ router, db, destinations }) => {
        const database = name ?? db.databaseName ?? db.appName;
        const create = (e: Event) => {
          e.preventDefault();
          void action.run((b) => `Backup of ${b.database} scheduled`, async () => {
            // The engine is known at run time only: the target field is `<router>Id`; the API checks the body.
            const body = { ...scheduleBody(form), database, databaseType: router, [`${router}Id`]: databaseId };
            const created = await ok(api.POST('/api/backup.create', { body: body as never }));
            setForm(blankSchedule());
            onCreated();
            return created;
          });
        };
        return (
          <form class="inline" onSubmit={create} aria-label="New backup schedule">
            {/* A libSQL server holds one database: the whole of it is dumped, the name kept as a label only. */}
            <p class="hint">Of {db.name}{router === 'dbE' ? ': its whole database' : ''}.</p>
            {router !== 'dbE' && <Field label="Database to dump" value={database} onInput={setName} required error={action.fields.database} />}
            <ScheduleFields form={form} onChange={setForm} destinations={destinations} errors={action.fields} />
            <button type="submit">Schedule backup</button>
            <NoticeLine notice={action.notice} />
          </form>
        );
      })}
    </Panel>
  );
}
