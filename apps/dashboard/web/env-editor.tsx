import { useState } from 'preact/hooks';
import { messageOf } from './api.js';

type Row = { kind: 'pair'; key: string; value: string } | { kind: 'raw'; text: string };

export function parseEnv(text: string): Row[] {
  return text.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1).map((line) => {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*=(.*)$/.exec(line);
    return m ? { kind: 'pair', key: m[1]!, value: m[2]! } : { kind: 'raw', text: line };
  });
}

export const formatEnv = (rows: Row[]) =>
  rows.filter((r) => r.kind === 'raw' || r.key.trim() !== '').map((r) => (r.kind === 'pair' ? `${r.key.trim()}=${r.value}` : r.text)).join('\n');

/**
 * A workload's dotenv, one row per variable. Values are masked (password inputs) until shown
 * one by one: a screen shared in a meeting shows names, not secrets. Comments and other lines
 * are kept as they are.
 */
export function EnvEditor({ initial, save }: { initial: string; save: (env: string) => Promise<unknown> }) {
  const [rows, setRows] = useState<Row[]>(() => parseEnv(initial));
  const [shown, setShown] = useState<Set<number>>(new Set());
  const [status, setStatus] = useState<{ text: string; error: boolean } | null>(null);
  const set = (i: number, patch: Partial<{ key: string; value: string }>) =>
    setRows((all) => all.map((r, j) => (j === i && r.kind === 'pair' ? { ...r, ...patch } : r)));
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await save(formatEnv(rows));
      setStatus({ text: 'Environment saved', error: false });
    } catch (err) {
      setStatus({ text: messageOf(err), error: true });
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="env-title">
      <h2 id="env-title">Environment variables</h2>
      <table class="env">
        <thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col"><span class="sr-only">Show or hide</span></th></tr></thead>
        <tbody>
          {rows.map((r, i) => r.kind === 'raw' ? null : (
            <tr key={i}>
              <td><input aria-label={`Name of variable ${i + 1}`} value={r.key} onInput={(e) => set(i, { key: (e.target as HTMLInputElement).value })} /></td>
              <td><input aria-label={`Value of ${r.key || `variable ${i + 1}`}`} type={(shown.has(i) ? 'text' : 'password') as 'text'} autoComplete="off" value={r.value}
                onInput={(e) => set(i, { value: (e.target as HTMLInputElement).value })} /></td>
              <td><button type="button" aria-pressed={shown.has(i)} onClick={() => setShown((s) => {
                const next = new Set(s);
                if (!next.delete(i)) next.add(i);
                return next;
              })}>{shown.has(i) ? 'Hide' : 'Show'}<span class="sr-only"> {r.key}</span></button></td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" onClick={() => setRows((all) => [...all, { kind: 'pair', key: '', value: '' }])}>Add variable</button>{' '}
      <button type="submit">Save environment</button>
      {status && <p role={status.error ? 'alert' : 'status'} class={status.error ? 'error' : ''}>{status.text}</p>}
    </form>
  );
}
