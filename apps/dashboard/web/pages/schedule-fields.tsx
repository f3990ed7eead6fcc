import { describeCron } from '../cron.js';
import type { ScheduleForm } from '../service-forms.js';
import { Check, Field, Select } from '../ui.js';

/** The fields every backup schedule has: destination, cron schedule (said in words), prefix, how many to keep, enabled. */
export function ScheduleFields({ form, onChange, destinations, errors }: {
  form: ScheduleForm; onChange: (f: ScheduleForm) => void; destinations: { destinationId: string; name: string }[]; errors: Record<string, string>;
}) {
  const set = <K extends keyof ScheduleForm>(k: K) => (v: ScheduleForm[K]) => onChange({ ...form, [k]: v });
  return (
    <>
      <Select label="Destination" value={form.destinationId} onChange={set('destinationId')}
        options={[{ value: '', label: 'Choose a destination' }, ...destinations.map((d) => ({ value: d.destinationId, label: d.name }))]} />
      {errors.destinationId && <p class="error">{errors.destinationId}</p>}
      <Field label="Schedule (cron)" value={form.schedule} onInput={set('schedule')} required hint={describeCron(form.schedule)} error={errors.schedule} />
      <Field label="Prefix (folder in the bucket)" value={form.prefix} onInput={set('prefix')} required error={errors.prefix} />
      <Field label="Keep the latest" type="number" value={form.keepLatestCount} onInput={set('keepLatestCount')} hint="files; empty keeps all" error={errors.keepLatestCount} />
      <Check label="Enabled" checked={form.enabled} onChange={set('enabled')} />
    </>
  );
}
