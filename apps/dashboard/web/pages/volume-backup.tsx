import { useState } from 'preact/hooks';
import { type Api, ok } from '../api.js';
import { type ScheduleForm, blankSchedule, scheduleBody } from '../service-forms.js';
import { NoticeLine, Panel, Select, useAction, useLoad } from '../ui.js';
import { ScheduleFields } from './schedule-fields.js';

/**
 * A backup schedule of one of an application's named volumes (volumeBackup.create). The API
 * lists no volume backups: the one just made is said with its id.
 */
export function VolumeBackup({ api, applicationId }: { api: Api; applicationId: string }) {
  const data = useLoad(async () => {
    const [mounts, destinations] = await Promise.all([
      ok(api.GET('/api/mounts.all', { params: { query: { applicationId } } })),
      ok(api.GET('/api/destination.all')),
    ]);
    return { volumes: mounts.flatMap((m) => (m.type === 'volume' && m.volumeName ? [m.volumeName] : [])), destinations };
  }, [applicationId]);
  const [volumeName, setVolumeName] = useState('');
  const [form, setForm] = useState<ScheduleForm>(blankSchedule);
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void action.run((b) => `Volume backup of ${b.volumeName} scheduled (${b.volumeBackupId})`, async () => {
      const created = await ok(api.POST('/api/volumeBackup.create', { body: { applicationId, volumeName, ...scheduleBody(form) } }));
      setForm(blankSchedule());
      return created;
    });
  };
  return (
    <Panel title="Volume backup">
      {data.view(({ volumes, destinations }) => volumes.length === 0 ? <p>No named volume to back up: add a volume mount first.</p> : (
        <form class="inline" onSubmit={create} aria-label="New volume backup">
          <Select label="Volume" value={volumeName} onChange={setVolumeName}
            options={[{ value: '', label: 'Choose a volume' }, ...volumes.map((v) => ({ value: v, label: v }))]} />
          {action.fields.volumeName && <p class="error">{action.fields.volumeName}</p>}
          <ScheduleFields form={form} onChange={setForm} destinations={destinations} errors={action.fields} />
          <button type="submit">Schedule volume backup</button>
          <NoticeLine notice={action.notice} />
        </form>
      ))}
    </Panel>
  );
}
