import { useEffect, useState } from 'preact/hooks';
import { messageOf } from './api.js';
import { readSse } from './sse.js';

interface EventJson {
  eventId: string;
  kind: string;
  outcome: string;
  workload: { kind: string; id: string; name: string } | null;
  summary: Record<string, unknown>;
  occurredAt: string;
}

/** The organization's events as they happen (`GET /api/events`), newest first; reconnects after a drop, resuming after the last event seen. */
export function LiveEvents({ apiKey }: { apiKey: string }) {
  const [events, setEvents] = useState<EventJson[]>([]);
  const [state, setState] = useState('connecting');
  useEffect(() => {
    const aborter = new AbortController();
    let last = '';
    const run = async () => {
      while (!aborter.signal.aborted) {
        try {
          setState('live');
          const url = `/api/events${last ? `?lastEventId=${encodeURIComponent(last)}` : ''}`;
          await readSse(url, apiKey, (e) => {
            if (e.id) last = e.id;
            const event = JSON.parse(e.data) as EventJson;
            setEvents((list) => [event, ...list].slice(0, 50));
            dispatchEvent(new CustomEvent('skiff:event', { detail: event }));
          }, aborter.signal);
        } catch (err) {
          if (aborter.signal.aborted) return;
          setState(`disconnected: ${messageOf(err)}`);
        }
        await new Promise((r) => setTimeout(r, 3000));
      }
    };
    void run();
    return () => aborter.abort();
  }, [apiKey]);
  return (
    <aside class="events" aria-labelledby="events-title">
      <h2 id="events-title">Live events <span class="muted">({state})</span></h2>
      <ol aria-live="polite" aria-label="Events">
        {events.map((e) => (
          <li key={e.eventId} class={`outcome-${e.outcome}`}>
            <strong>{e.kind}</strong> {e.outcome}{e.workload ? ` · ${e.workload.name}` : ''}
            {typeof e.summary.title === 'string' ? <> · {e.summary.title}</> : typeof e.summary.message === 'string' ? <> · {e.summary.message}</> : null}
            <br /><time dateTime={e.occurredAt} class="muted">{new Date(e.occurredAt).toLocaleTimeString()}</time>
          </li>
        ))}
      </ol>
    </aside>
  );
}
