import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api.js';
import { readSse } from './sse.js';

/** A deployment's log, followed live until the deployment ends (`GET /api/logs.deployment?follow=true`). */
export function DeploymentLog({ apiKey, deploymentId }: { apiKey: string; deploymentId: string }) {
  const [lines, setLines] = useState<string[]>([]);
  const [end, setEnd] = useState<string | null>(null);
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const aborter = new AbortController();
    const url = `/api/logs.deployment?deploymentId=${encodeURIComponent(deploymentId)}&follow=true`;
    readSse(url, apiKey, (e) => {
      const data = JSON.parse(e.data) as { text?: string; reason?: string };
      if (e.event === 'line') setLines((l) => [...l.slice(-4999), data.text ?? '']);
      else if (e.event === 'end') setEnd(data.reason ?? 'ended');
    }, aborter.signal).catch((err) => !aborter.signal.aborted && setEnd(messageOf(err)));
    return () => aborter.abort();
  }, [deploymentId, apiKey]);
  useEffect(() => {
    if (box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines]);
  return (
    <div class="log">
      <h3>Log of {deploymentId} {end ? <span class="muted">({end})</span> : <span class="muted">(live)</span>}</h3>
      <pre ref={box} tabIndex={0} aria-label={`Log of deployment ${deploymentId}`}>{lines.join('\n')}</pre>
    </div>
  );
}
