import type { EventRecord } from '@skiff/db';
import { describe, expect, it } from 'vitest';
import { renderEvent } from './event-message.js';

const threshold = (state: 'crossed' | 'recovered'): EventRecord => ({
  id: '42',
  organizationId: 'org',
  kind: 'serverThreshold',
  outcome: state === 'crossed' ? 'failure' : 'success',
  workloadKind: null,
  workloadId: null,
  workloadName: null,
  projectId: null,
  environmentId: null,
  serverId: null,
  summary: {
    subject: `memory on the platform host ${state === 'crossed' ? 'crossed' : 'is back under'} 80 %`,
    serverType: 'Platform',
    type: 'memory',
    value: state === 'crossed' ? 91.5 : 60,
    threshold: 80,
    state,
  },
  occurredAt: new Date('2026-12-08T03:00:00Z'),
});

describe('a serverThreshold message', () => {
  it('says the threshold was crossed', () => {
    expect(renderEvent(threshold('crossed'))).toMatchObject({
      title: 'Server threshold crossed: memory on the platform host crossed 80 %',
      text: 'memory usage 91.5% is above the 80% threshold',
    });
  });

  it('says the server is back under it when it recovered, never that it crossed', () => {
    const message = renderEvent(threshold('recovered'));
    expect(message).toMatchObject({
      title: 'Server back under its threshold: memory on the platform host is back under 80 %',
      text: 'memory usage 60% is back under the 80% threshold',
    });
    expect(`${message.title} ${message.text}`).not.toMatch(/crossed|above/);
  });
});
