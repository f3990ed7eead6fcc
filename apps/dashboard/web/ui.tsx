import type { ComponentChildren } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { messageOf } from './api.js';

/** A labelled text input. */
export function Field(props: { label: string; value: string; onInput: (v: string) => void; required?: boolean; type?: 'text' | 'password'; placeholder?: string }) {
  const id = useId();
  return (
    <span class="field">
      <label for={id}>{props.label}</label>
      <input id={id} type={(props.type ?? 'text') as 'text'} value={props.value} required={props.required} placeholder={props.placeholder}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)} />
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
