import { describe, expect, it } from 'vitest';
import { cronError, isValidCron, parseCron, previousFire } from './cron.js';

const range = (from: number, to: number, step = 1) => {
  const out: number[] = [];
  for (let v = from; v <= to; v += step) out.push(v);
  return out;
};

describe('parseCron', () => {
  it('reads five fields with seconds at 0', () => {
    const s = parseCron('30 3 * * *');
    expect(s).toEqual({
      seconds: [0],
      minutes: [30],
      hours: [3],
      daysOfMonth: range(1, 31),
      months: range(1, 12),
      daysOfWeek: range(0, 6),
      daysOfMonthRestricted: false,
      daysOfWeekRestricted: false,
    });
  });

  it('reads six fields with seconds first', () => {
    const s = parseCron('15 30 3 * * *');
    expect(s.seconds).toEqual([15]);
    expect(s.minutes).toEqual([30]);
    expect(s.hours).toEqual([3]);
  });

  it('expands lists, ranges and steps', () => {
    expect(parseCron('0,15,30,45 * * * *').minutes).toEqual([0, 15, 30, 45]);
    expect(parseCron('* 9-17 * * *').hours).toEqual(range(9, 17));
    expect(parseCron('*/15 * * * *').minutes).toEqual([0, 15, 30, 45]);
    expect(parseCron('10-40/10 * * * *').minutes).toEqual([10, 20, 30, 40]);
    expect(parseCron('5/20 * * * *').minutes).toEqual([5, 25, 45]);
    expect(parseCron('* * */10 * *').daysOfMonth).toEqual([1, 11, 21, 31]);
    expect(parseCron('1,5-7,*/20 * * * *').minutes).toEqual([0, 1, 5, 6, 7, 20, 40]);
    expect(parseCron('05 * * * *').minutes).toEqual([5]);
  });

  it('accepts month and week-day names in any case, also in ranges and lists', () => {
    expect(parseCron('0 0 1 jan,Jul *').months).toEqual([1, 7]);
    expect(parseCron('0 0 1 MAR-MAY *').months).toEqual([3, 4, 5]);
    expect(parseCron('0 9 * * MON-FRI').daysOfWeek).toEqual([1, 2, 3, 4, 5]);
    expect(parseCron('0 9 * * sun,SAT').daysOfWeek).toEqual([0, 6]);
    expect(parseCron('0 0 * JAN/3 *').months).toEqual([1, 4, 7, 10]);
  });

  it('treats day-of-week 7 as Sunday', () => {
    expect(parseCron('0 0 * * 7').daysOfWeek).toEqual([0]);
    expect(parseCron('0 0 * * 5-7').daysOfWeek).toEqual([0, 5, 6]);
  });

  it('tells restricted day fields from `*` ones', () => {
    const both = parseCron('0 0 1,15 * MON');
    expect(both.daysOfMonthRestricted).toBe(true);
    expect(both.daysOfWeekRestricted).toBe(true);
    const stepped = parseCron('0 0 */2 * *');
    expect(stepped.daysOfMonthRestricted).toBe(false);
  });

  it('expands the macros', () => {
    expect(parseCron('@hourly')).toEqual(parseCron('0 * * * *'));
    expect(parseCron('@daily')).toEqual(parseCron('0 0 * * *'));
    expect(parseCron('@weekly')).toEqual(parseCron('0 0 * * 0'));
    expect(parseCron('@monthly')).toEqual(parseCron('0 0 1 * *'));
    expect(parseCron('@yearly')).toEqual(parseCron('0 0 1 1 *'));
    expect(parseCron('@DAILY').hours).toEqual([0]);
  });

  it('ignores surrounding and repeated whitespace', () => {
    expect(parseCron('  0   3\t* * *  ').hours).toEqual([3]);
  });
});

describe('cronError', () => {
  it('accepts common schedules', () => {
    for (const ok of [
      '* * * * *',
      '0 3 * * *',
      '*/5 * * * *',
      '0 0 * * 0',
      '0 0 1 * *',
      '0 0 29 2 *',
      '0 12 * * MON-FRI',
      '0 0 31 * *',
      '30 */6 * * *',
      '*/30 * * * * *',
      '59 59 23 31 12 7',
      '0 0 31 2 MON',
      '0 0 0 * * *',
      '@yearly',
    ]) {
      expect(cronError(ok), ok).toBeNull();
      expect(isValidCron(ok)).toBe(true);
    }
  });

  it('refuses the wrong number of fields', () => {
    expect(cronError('')).toMatch(/empty/);
    expect(cronError('   ')).toMatch(/empty/);
    expect(cronError('* * * *')).toMatch(/got 4/);
    expect(cronError('* * * * * * *')).toMatch(/got 7/);
    expect(cronError('every day')).toMatch(/got 2/);
  });

  it('refuses numbers out of range, naming the field', () => {
    expect(cronError('60 * * * *')).toMatch(/^minute field: 60 is out of range 0-59/);
    expect(cronError('* 24 * * *')).toMatch(/^hour field: 24/);
    expect(cronError('* * 0 * *')).toMatch(/^day-of-month field: 0/);
    expect(cronError('* * 32 * *')).toMatch(/^day-of-month field: 32/);
    expect(cronError('* * * 0 *')).toMatch(/^month field: 0/);
    expect(cronError('* * * 13 *')).toMatch(/^month field: 13/);
    expect(cronError('* * * * 8')).toMatch(/^day-of-week field: 8/);
    expect(cronError('60 * * * * *')).toMatch(/^second field: 60/);
    expect(cronError('1,2,99 * * * *')).toMatch(/99/);
  });

  it('refuses malformed items', () => {
    for (const bad of [
      '-1 * * * *',
      '1- * * * *',
      '1-2-3 * * * *',
      '1,,2 * * * *',
      ', * * * *',
      '*/ * * * *',
      '*/0 * * * *',
      '*/61 * * * *',
      '*/x * * * *',
      '*/5/2 * * * *',
      '30-10 * * * *',
      '1.5 * * * *',
      '+1 * * * *',
      'a * * * *',
      '? * * * *',
      '* * L * *',
      '* * 15W * *',
      '* * * * 5#3',
      '** * * * *',
      '*-5 * * * *',
      '* * * * MON-SUN',
      '0 0 * FOO *',
      'JAN * * * *',
      '0 0 * * JAN',
      '0 0 * MON *',
    ]) {
      expect(cronError(bad), bad).not.toBeNull();
    }
  });

  it('refuses unknown macros', () => {
    expect(cronError('@reboot')).toMatch(/unknown macro/);
    expect(cronError('@every 5m')).toMatch(/unknown macro/);
    expect(cronError('@')).toMatch(/unknown macro/);
  });

  it('refuses a day of the month no selected month has', () => {
    expect(cronError('0 0 30 2 *')).toMatch(/never fires/);
    expect(cronError('0 0 31 4,6,9,11 *')).toMatch(/never fires/);
    expect(cronError('0 0 31 4,5 *')).toBeNull();
  });
});

describe('previousFire', () => {
  const prev = (expr: string, at: string) => previousFire(parseCron(expr), new Date(at))?.toISOString();
  it('answers the latest firing at or before the time, in UTC', () => {
    expect(prev('0 3 * * *', '2026-12-05T17:00:00Z')).toBe('2026-12-05T03:00:00.000Z');
    expect(prev('0 3 * * *', '2026-12-05T03:00:00Z')).toBe('2026-12-05T03:00:00.000Z');
    expect(prev('0 3 * * *', '2026-12-05T02:59:59Z')).toBe('2026-12-04T03:00:00.000Z');
    expect(prev('*/15 * * * *', '2026-12-05T17:44:59Z')).toBe('2026-12-05T17:30:00.000Z');
    expect(prev('30 10 * * * *', '2026-12-05T17:10:29Z')).toBe('2026-12-05T16:10:30.000Z');
    expect(prev('* * * * * *', '2026-12-05T17:10:29.700Z')).toBe('2026-12-05T17:10:29.000Z');
    expect(prev('0 0 * * MON', '2026-12-05T17:00:00Z')).toBe('2026-11-30T00:00:00.000Z');
    expect(prev('0 0 1,15 * MON', '2026-12-05T17:00:00Z')).toBe('2026-12-01T00:00:00.000Z');
    expect(prev('0 0 29 2 *', '2026-12-05T17:00:00Z')).toBe('2024-02-29T00:00:00.000Z');
    expect(prev('5 10 * * *', '2026-12-05T10:04:00Z')).toBe('2026-12-04T10:05:00.000Z');
  });
});

describe('cronError', () => {
  it('refuses an expression longer than any that lists every value, before parsing it', () => {
    const every = `${Array.from({ length: 60 }, (_, i) => i).join(',')} ${Array.from({ length: 60 }, (_, i) => i).join(',')} ${Array.from({ length: 24 }, (_, i) => i).join(',')} ${Array.from({ length: 31 }, (_, i) => i + 1).join(',')} ${Array.from({ length: 12 }, (_, i) => i + 1).join(',')} 0,1,2,3,4,5,6`;
    expect(cronError(every)).toBeNull();
    expect(cronError(`${Array.from({ length: 600 }, () => '5').join(',')} 3 * * *`)).toBe('longer than 1000 characters');
  });
});
