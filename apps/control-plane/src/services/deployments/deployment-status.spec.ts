import { describe, expect, it } from 'vitest';
import { LINE_CAP, appendLog, applicationStatusFor, canMove, isFinished } from './deployment-status.js';

describe('deployment status moves', () => {
  it('goes forward from queued and running, and never leaves an end', () => {
    expect(canMove('queued', 'running')).toBe(true);
    expect(canMove('queued', 'error')).toBe(true);
    expect(canMove('running', 'done')).toBe(true);
    expect(canMove('running', 'queued')).toBe(false);
    expect(canMove('running', 'running')).toBe(false);
    for (const end of ['done', 'error', 'cancelled'] as const) {
      expect(isFinished(end)).toBe(true);
      for (const to of ['queued', 'running', 'done', 'error', 'cancelled'] as const) expect(canMove(end, to)).toBe(false);
    }
    expect(isFinished('queued')).toBe(false);
  });

  it('moves the application with running, done and error only', () => {
    expect(applicationStatusFor('running')).toBe('running');
    expect(applicationStatusFor('done')).toBe('done');
    expect(applicationStatusFor('error')).toBe('error');
    expect(applicationStatusFor('cancelled')).toBeUndefined();
    expect(applicationStatusFor('queued')).toBeUndefined();
  });
});

describe('appendLog', () => {
  it('adds lines with line breaks, flattening breaks inside a line', () => {
    expect(appendLog('', ['a', 'b'])).toBe('a\nb\n');
    expect(appendLog('a\n', ['b\r\nc'])).toBe('a\nb c\n');
    expect(appendLog('a\n', [])).toBe('a\n');
  });

  it('keeps the newest whole lines within the cap', () => {
    const log = appendLog('', ['1111', '2222', '3333'], 12);
    expect(log).toBe('2222\n3333\n');
    expect(appendLog(log, ['44'], 12)).toBe('3333\n44\n');
  });

  it('cuts a line longer than the line cap, and keeps the tail of one huge line', () => {
    const long = 'x'.repeat(LINE_CAP + 10);
    const log = appendLog('', [long]);
    expect(log).toBe('x'.repeat(LINE_CAP) + ' [line cut]\n');
    expect(appendLog('', ['abcdefghij'], 5)).toBe('ghij\n');
  });
});
