/**
 * Cron expressions as backup schedules take them:
 * - five fields `minute hour day-of-month month day-of-week`, or six with a leading `second`;
 * - in each field: `*`, a number, a range `a-b`, a step `*\/n`, `a-b/n` or `a/n` (from a to the
 *   field's end), and comma-separated lists of these;
 * - months `JAN`…`DEC` and week days `SUN`…`SAT` by name (any case), also in ranges;
 *   day-of-week 0 and 7 both mean Sunday;
 * - the macros `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`.
 * Day-of-month and day-of-week combine as in classic cron: when both are restricted, a day
 * matching either one fires.
 */

export interface CronSchedule {
  seconds: number[];
  minutes: number[];
  hours: number[];
  daysOfMonth: number[];
  months: number[];
  /** 0 (Sunday) to 6 (Saturday); a 7 in the expression is stored as 0. */
  daysOfWeek: number[];
  /** False when the day-of-month field is `*` (or starts with `*`). */
  daysOfMonthRestricted: boolean;
  /** False when the day-of-week field is `*` (or starts with `*`). */
  daysOfWeekRestricted: boolean;
}

export class CronError extends Error {}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** Offset of `names[0]`: months are 1-based, week days 0-based. */
  namesFrom?: number;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { name: 'day-of-month', min: 1, max: 31 };
const MONTH: FieldSpec = { name: 'month', min: 1, max: 12, names: MONTHS, namesFrom: 1 };
const DAY_OF_WEEK: FieldSpec = { name: 'day-of-week', min: 0, max: 7, names: DAYS, namesFrom: 0 };

const MACROS: Record<string, string> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
};

/** The most days each month can have (February in a leap year). */
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function value(text: string, f: FieldSpec): number {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n < f.min || n > f.max) throw new CronError(`${f.name} field: ${text} is out of range ${f.min}-${f.max}`);
    return n;
  }
  const named = f.names?.indexOf(text.toUpperCase() as never) ?? -1;
  if (named >= 0) return named + f.namesFrom!;
  throw new CronError(`${f.name} field: "${text}" is not a ${f.names ? 'number or name' : 'number'}`);
}

function step(text: string, f: FieldSpec): number {
  if (!/^\d+$/.test(text)) throw new CronError(`${f.name} field: step "${text}" is not a number`);
  const n = Number(text);
  const span = f.max - f.min + 1;
  if (n < 1 || n > span) throw new CronError(`${f.name} field: step ${text} must be from 1 to ${span}`);
  return n;
}

function field(text: string, f: FieldSpec): { values: Set<number>; restricted: boolean } {
  const values = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') throw new CronError(`${f.name} field: empty list item in "${text}"`);
    const parts = item.split('/');
    if (parts.length > 2) throw new CronError(`${f.name} field: "${item}" has more than one step`);
    const [base, stepText] = parts as [string, string | undefined];
    const every = stepText === undefined ? 1 : step(stepText, f);
    let from: number;
    let to: number;
    if (base === '*') {
      from = f.min;
      to = f.max;
    } else if (base.includes('-')) {
      const bounds = base.split('-');
      if (bounds.length !== 2 || bounds[0] === '' || bounds[1] === '') {
        throw new CronError(`${f.name} field: "${base}" is not a range`);
      }
      from = value(bounds[0]!, f);
      to = value(bounds[1]!, f);
      if (from > to) throw new CronError(`${f.name} field: range ${base} runs backwards`);
    } else {
      from = value(base, f);
      // `a/n` runs from a to the end of the field; a lone `a` is just a.
      to = stepText === undefined ? from : f.max;
    }
    for (let v = from; v <= to; v += every) values.add(v);
  }
  return { values, restricted: !text.startsWith('*') };
}

const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);

/** Parses an expression; throws a CronError saying what is wrong. */
export function parseCron(expression: string): CronSchedule {
  if (typeof expression !== 'string') throw new CronError('not a text');
  let text = expression.trim();
  if (text.startsWith('@')) {
    const expanded = MACROS[text.toLowerCase()];
    if (!expanded) throw new CronError(`unknown macro ${text}; use one of ${Object.keys(MACROS).join(', ')}`);
    text = expanded;
  }
  if (text === '') throw new CronError('empty expression');
  const parts = text.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    throw new CronError(`expected 5 fields (minute hour day-of-month month day-of-week) or 6 (with seconds first), got ${parts.length}`);
  }
  const [sec, min, hour, dom, month, dow] = parts.length === 6 ? parts : ['0', ...parts];
  const daysOfMonth = field(dom!, DAY_OF_MONTH);
  const months = field(month!, MONTH);
  const daysOfWeek = field(dow!, DAY_OF_WEEK);
  const weekDays = new Set([...daysOfWeek.values].map((d) => (d === 7 ? 0 : d)));
  const schedule: CronSchedule = {
    seconds: sorted(field(sec!, SECOND).values),
    minutes: sorted(field(min!, MINUTE).values),
    hours: sorted(field(hour!, HOUR).values),
    daysOfMonth: sorted(daysOfMonth.values),
    months: sorted(months.values),
    daysOfWeek: sorted(weekDays),
    daysOfMonthRestricted: daysOfMonth.restricted,
    daysOfWeekRestricted: daysOfWeek.restricted,
  };
  // Only the day of the month selects days (day-of-week is `*`): it must exist in some month.
  if (schedule.daysOfMonthRestricted && !schedule.daysOfWeekRestricted) {
    const firstDay = schedule.daysOfMonth[0]!;
    if (!schedule.months.some((m) => firstDay <= DAYS_IN_MONTH[m - 1]!)) {
      throw new CronError(`never fires: no selected month has day ${firstDay}`);
    }
  }
  return schedule;
}

/** Why an expression is not a valid cron schedule, or null when it is. */
/** Longer than any expression listing every value of every field: a schedule is parsed at every scheduler tick. */
export const MAX_CRON_LENGTH = 1000;

export function cronError(expression: string): string | null {
  if (typeof expression === 'string' && expression.length > MAX_CRON_LENGTH) return `longer than ${MAX_CRON_LENGTH} characters`;
  try {
    parseCron(expression);
    return null;
  } catch (err) {
    if (err instanceof CronError) return err.message;
    throw err;
  }
}

export const isValidCron = (expression: string) => cronError(expression) === null;

function dayFires(s: CronSchedule, day: Date): boolean {
  if (!s.months.includes(day.getUTCMonth() + 1)) return false;
  const dom = s.daysOfMonth.includes(day.getUTCDate());
  const dow = s.daysOfWeek.includes(day.getUTCDay());
  if (s.daysOfMonthRestricted && s.daysOfWeekRestricted) return dom || dow;
  if (s.daysOfMonthRestricted) return dom;
  if (s.daysOfWeekRestricted) return dow;
  return true;
}

/** The largest value of a sorted list that is at most `limit`, or null. */
const atMost = (values: number[], limit: number) => {
  for (let i = values.length - 1; i >= 0; i--) if (values[i]! <= limit) return values[i]!;
  return null;
};

/** The latest time (UTC, whole seconds) at or before `at` when the schedule fires; null when none in the 8 years before. */
export function previousFire(s: CronSchedule, at: Date): Date | null {
  const dayStart = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  const limitOfDay = Math.floor((at.getTime() - dayStart) / 1000);
  for (let back = 0; back < 366 * 8; back++) {
    const start = dayStart - back * 86_400_000;
    if (!dayFires(s, new Date(start))) continue;
    let limit = back === 0 ? limitOfDay : 86_399;
    for (;;) {
      const h = atMost(s.hours, Math.floor(limit / 3600));
      if (h === null) break;
      const minuteLimit = h === Math.floor(limit / 3600) ? Math.floor((limit % 3600) / 60) : 59;
      const m = atMost(s.minutes, minuteLimit);
      if (m === null) {
        limit = h * 3600 - 1;
        if (limit < 0) break;
        continue;
      }
      const secondLimit = h === Math.floor(limit / 3600) && m === minuteLimit ? limit % 60 : 59;
      const sec = atMost(s.seconds, secondLimit);
      if (sec === null) {
        limit = h * 3600 + m * 60 - 1;
        if (limit < 0) break;
        continue;
      }
      return new Date(start + (h * 3600 + m * 60 + sec) * 1000);
    }
  }
  return null;
}
