import type { ComponentChildren } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { fieldsOf, messageOf } from './api.js';

/** A labelled text input; `hint` and the API's `error` for the field are read with it. */
export function Field(props: {
  label: string; value: string; onInput: (v: string) => void; required?: boolean; type?: 'text' | 'password' | 'number'; placeholder?: string;
  hint?: string; error?: string; autoComplete?: string;
}) {
  const id = useId();
  const described = [props.hint && `${id}-hint`, props.error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <span class="field">
      <label for={id}>{props.label}</label>
      <input id={id} type={(props.type ?? 'text') as 'text'} value={props.value} required={props.required} placeholder={props.placeholder}
        autoComplete={props.autoComplete} aria-invalid={props.error ? true : undefined} aria-describedby={described || undefined}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)} />
      {props.hint && <span id={`${id}-hint`} class="hint">{props.hint}</span>}
      {props.error && <span id={`${id}-error`} class="error field-error">{props.error}</span>}
    </span>
  );
}

/** Loads data for a page: `view` renders it, or says it is loading, or the error. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    load().then((data) => live && setState({ data }), (err) => live && setState({ error: messageOf(err) }));
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return {
    data: state.data,
    reload: () => setRound((r) => r + 1),
    view(render: (data: T) => ComponentChildren) {
      if (state.error) return <p role="alert" class="error">{state.error}</p>;
      if (state.data === undefined) return <p aria-busy="true">Loading…</p>;
      return render(state.data);
    },
  };
}

/** A labelled checkbox. */
export function Check(props: { label: string; checked: boolean; onChange: (v: boolean) => void }) {
  return (
    <label class="check">
      <input type="checkbox" checked={props.checked} onChange={(e) => props.onChange((e.target as HTMLInputElement).checked)} />
      {props.label}
    </label>
  );
}

/** A labelled select. */
export function Select(props: { label: string; value: string; options: { value: string; label: string }[]; onChange: (v: string) => void }) {
  const id = useId();
  return (
    <span class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
      </select>
    </span>
  );
}

export type Notice = { text: string; error: boolean } | null;

/**
 * Runs one user action: its outcome becomes a notice (the API's error message when it refuses),
 * which `<NoticeLine>` shows as a status or an alert.
 */
export function useAction() {
  const [notice, setNotice] = useState<Notice>(null);
  // The fields a BAD_REQUEST named, with their reasons, to show next to each input.
  const [fields, setFields] = useState<Record<string, string>>({});
  const run = async <T,>(done: string | ((v: T) => string), work: () => Promise<T>): Promise<T | undefined> => {
    setNotice(null);
    setFields({});
    try {
      const value = await work();
      setNotice({ text: typeof done === 'string' ? done : done(value), error: false });
      return value;
    } catch (err) {
      setNotice({ text: messageOf(err), error: true });
      setFields(fieldsOf(err));
      return undefined;
    }
  };
  return { notice, fields, run, clear: () => setNotice(null) };
}

export function NoticeLine({ notice }: { notice: Notice }) {
  if (!notice) return null;
  return <p role={notice.error ? 'alert' : 'status'} class={notice.error ? 'error' : ''}>{notice.text}</p>;
}

/** A secret shown as dots until its Show button is pressed. */
export function Masked({ label, value }: { label: string; value: string }) {
  const [shown, setShown] = useState(false);
  return (
    <span class="masked">
      <code aria-label={shown ? label : `${label} (hidden)`}>{shown ? value : '•'.repeat(12)}</code>{' '}
      <button type="button" aria-pressed={shown} onClick={() => setShown(!shown)}>{shown ? 'Hide' : 'Show'}<span class="sr-only"> {label}</span></button>
    </span>
  );
}

/** A panel: a titled region of a page. */
export function Panel({ title, children }: { title: string; children: ComponentChildren }) {
  const id = useId();
  return (
    <article class="panel" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </article>
  );
}

export const when = (iso: string | null | undefined) => (iso ? <time dateTime={iso}>{new Date(iso).toLocaleString()}</time> : <span class="muted">never</span>);

export function bytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}
