import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { flagOn, onlyFlags, stringFlag } from '../args.js';
import { ProjectFile } from '../declarative/model.js';
import { planApply, runPlan } from '../declarative/plan.js';
import { exportProject } from '../declarative/read.js';
import { usage } from '../errors.js';
import { paint } from '../output.js';
import type { Session } from '../session.js';

const HEADER =
  '# skiff export: apply with `skiff apply -f <file>`. Env values of secret-looking names are null: the platform keeps them.\n' +
  '# Passwords are never in the file: apply generates a new cache\'s, the platform a new database\'s.\n';

/** `skiff export <project> [-o file]`: the project as YAML (stdout by default). */
export async function exportCommand(s: Session): Promise<void> {
  onlyFlags(s.args, ['json', 'help', 'context', 'output'], 'export');
  const [ref, ...extra] = s.args.positionals;
  if (!ref || extra.length) throw usage('usage: skiff export <project name or id> [-o skiff.yaml]');
  const file = await exportProject(s.client(), ref);
  const text = s.json ? `${JSON.stringify(file, null, 2)}\n` : HEADER + stringify(file, { lineWidth: 0 });
  const output = stringFlag(s.args, 'output');
  if (!output || output === '-') s.io.out(text);
  else {
    writeFileSync(output, text);
    s.io.err(`Wrote project ${file.project.name} to ${output}\n`);
  }
}

/** `skiff apply -f skiff.yaml [--dry-run]`: creates and updates until the platform matches the file. */
export async function apply(s: Session): Promise<void> {
  onlyFlags(s.args, ['json', 'help', 'context', 'file', 'dry-run'], 'apply');
  if (s.args.positionals.length) throw usage('usage: skiff apply -f skiff.yaml [--dry-run]');
  const path = stringFlag(s.args, 'file');
  if (!path) throw usage('file: required (-f skiff.yaml, or - for stdin)');
  let raw: unknown;
  try {
    raw = parse(path === '-' ? s.readStdin() : readFileSync(path, 'utf8'));
  } catch (err) {
    throw usage(`file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const parsed = ProjectFile.safeParse(raw);
  if (!parsed.success) throw usage(`${path} is not a skiff file`, parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(file)', message: i.message })));
  const client = s.client();
  const plan = await planApply(client, parsed.data);
  const dryRun = flagOn(s.args, 'dry-run');
  const describe = (a: (typeof plan.actions)[number]) =>
    `${a.verb === 'create' ? paint(s.io, 'green', '+ create') : paint(s.io, 'yellow', '~ update')} ${a.what}${a.fields.length ? `: ${a.fields.join(', ')}` : ''}\n` +
    (a.note ? `    ${paint(s.io, 'dim', a.note)}\n` : '');
  if (s.json) {
    if (!dryRun) await runPlan(client, plan, () => {});
    s.io.out(`${JSON.stringify({ dryRun, actions: plan.actions.map(({ verb, what, fields, note }) => ({ verb, what, fields, ...(note ? { note } : {}) })), left: plan.left, warnings: plan.warnings }, null, 2)}\n`);
    return;
  }
  if (dryRun) plan.actions.forEach((a) => s.io.out(describe(a)));
  else await runPlan(client, plan, (a) => s.io.out(describe(a)));
  for (const w of plan.warnings) s.io.err(`${paint(s.io, 'red', '!')} ${w}\n`);
  if (plan.left.length) {
    s.io.out(`Left as they are (apply never removes; remove them with their own commands):\n`);
    for (const l of plan.left) s.io.out(`  ${paint(s.io, 'dim', '=')} ${l}\n`);
  }
  s.io.out(plan.actions.length ? (dryRun ? `${plan.actions.length} change(s) planned; dry run, nothing changed.\n` : `${plan.actions.length} change(s) applied.\n`) : 'No changes.\n');
}
