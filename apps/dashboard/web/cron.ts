const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const NICKNAMES: Record<string, string> = {
  '@hourly': '0 * * * *', '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@weekly': '0 0 * * 0', '@monthly': '0 0 1 * *', '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *',
};
const num = (f: string, max: number) => (/^\d+$/.test(f) && Number(f) <= max ? Number(f) : null);
const pad = (n: number) => String(n).padStart(2, '0');

/**
 * A cron schedule (minute hour day-of-month month day-of-week, UTC) said in words, for a form's
 * hint. Patterns beyond the common ones are named field by field; the API decides validity.
 */
export function describeCron(expression: string): string {
  const expr = NICKNAMES[expression.trim()] ?? expression.trim();
  const f = expr.split(/\s+/);
  if (f.length !== 5) return 'Five fields: minute hour day-of-month month day-of-week (UTC), e.g. 0 3 * * * (every day at 03:00)';
  const [min, hour, dom, month, dow] = f as [string, string, string, string, string];
  const m = num(min, 59);
  const h = num(hour, 23);
  const step = /^\*\/(\d+)$/.exec(min);
  const rest = `${dom} ${month} ${dow}`;
  if (expr === '* * * * *') return 'Every minute';
  if (step && hour === '*' && rest === '* * *') return `Every ${step[1]} minutes`;
  if (m !== null && hour === '*' && rest === '* * *') return `Every hour at minute ${m}`;
  if (m !== null && h !== null) {
    const at = `at ${pad(h)}:${pad(m)} UTC`;
    if (rest === '* * *') return `Every day ${at}`;
    const d = num(dow, 7);
    if (dom === '*' && month === '*' && d !== null) return `Every ${DAYS[d % 7]} ${at}`;
    const day = num(dom, 31);
    if (day !== null && month === '*' && dow === '*') return `On day ${day} of every month ${at}`;
  }
  return `Minute ${min}, hour ${hour}, day-of-month ${dom}, month ${month}, day-of-week ${dow} (UTC)`;
}
