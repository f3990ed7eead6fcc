// The README's walkthrough as data: its sections, their ```sh blocks cut into steps (code and
// the output the README shows for it), and the check of a step's real output against that.
// tools/readme-walkthrough.e2e.test.ts runs it; tools/readme-walkthrough.spec.ts tests it.

/** Where the walkthrough starts in README.md: this heading and every section after it. */
export const WALKTHROUGH_START = '## Deploy a sample application';

export type Step = {
  /** Shell code, one or more lines, run as the README shows it. */
  code: string;
  /** The output the README shows right below the code (its `# ` comment lines), or none. */
  expected: string[];
};

export type Block =
  | { kind: 'run'; steps: Step[] }
  /** A `tools/up` line: restart Skiff with these variables. */
  | { kind: 'up'; env: Record<string, string>; line: string }
  | { kind: 'skip'; reason: string };

export type Section = { title: string; blocks: Block[] };

const SKIP = /^<!--[ \t]*walkthrough:[ \t]*skip\b(.*)-->$/;
const UP_LINE = /^((?:[A-Z][A-Z0-9_]*=[^\s'"]*\s+)*)tools\/up$/;

/** The walkthrough sections (`##` and `###` headings) of the README, from WALKTHROUGH_START on. */
export function walkthroughSections(readme: string): Section[] {
  const start = readme.indexOf(`\n${WALKTHROUGH_START}\n`);
  if (start < 0) throw new Error(`README.md has no "${WALKTHROUGH_START}" section`);
  const lines = readme.slice(start + 1).split('\n');
  const sections: Section[] = [];
  let section: Section | null = null;
  let skipReason: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heading = /^#{2,3} (.+)$/.exec(line);
    if (heading) {
      section = { title: heading[1]!, blocks: [] };
      sections.push(section);
      skipReason = null;
      continue;
    }
    const skip = SKIP.exec(line.trim());
    if (skip) {
      skipReason = skip[1]!.trim() || 'no reason given';
      continue;
    }
    if (line.startsWith('```')) {
      const fence = line.slice(3).trim();
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) body.push(lines[i]!);
      if (fence === 'sh' && section) {
        if (skipReason !== null) section.blocks.push({ kind: 'skip', reason: skipReason });
        else section.blocks.push(parseBlock(body));
      }
      skipReason = null;
      continue;
    }
    if (line.trim() !== '') skipReason = null;
  }
  return sections.filter((s) => s.blocks.length > 0);
}

/** A block: a `tools/up` line, or steps. */
export function parseBlock(body: string[]): Block {
  const code = body.filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  const up = code.length === 1 ? UP_LINE.exec(code[0]!.trim()) : null;
  if (up) {
    const env: Record<string, string> = {};
    for (const pair of up[1]!.trim().split(/\s+/).filter(Boolean)) {
      const eq = pair.indexOf('=');
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    return { kind: 'up', env, line: code[0]!.trim() };
  }
  return { kind: 'run', steps: parseSteps(body) };
}

/**
 * Cuts a block into steps. Comment lines right below code (no blank line between) are the
 * output the README shows for that code; a step ends with them. Other comments only explain.
 */
export function parseSteps(body: string[]): Step[] {
  const steps: Step[] = [];
  let code: string[] = [];
  let expected: string[] = [];
  let last: 'code' | 'expected' | 'other' = 'other';
  const flush = () => {
    if (code.length > 0) steps.push({ code: code.join('\n'), expected });
    code = [];
    expected = [];
  };
  for (const line of body) {
    const comment = line.trimStart().startsWith('#');
    if (comment && (last === 'code' || last === 'expected')) {
      expected.push(line.trimStart().replace(/^# ?/, ''));
      last = 'expected';
    } else if (comment) {
      last = 'other';
    } else if (line.trim() === '') {
      if (last === 'expected') flush();
      else if (code.length > 0) code.push(line);
      last = 'other';
    } else {
      if (last === 'expected') flush();
      code.push(line);
      last = 'code';
    }
  }
  flush();
  return steps;
}

// What varies from run to run: ids, timestamps, API keys, commit hashes, and the README's own
// elisions (`...`, `…`).
const VARIES = [
  /\.\.\.|…/g,
  /\b[a-z]{2,4}_[a-z0-9]{16}\b/g,
  /\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b/g,
  /\bskf_[A-Za-z0-9_-]+/g,
  /\bcommit [0-9a-f]{7,40}\b/g,
];

/** The fixed pieces of the README's expected output, in order. */
export function expectedFragments(expected: string[]): string[] {
  const fragments: string[] = [];
  for (const line of expected) {
    let parts = [line];
    for (const pattern of VARIES) parts = parts.flatMap((p) => p.split(pattern));
    for (const part of parts) {
      const fixed = squeeze(part);
      if (fixed !== '') fragments.push(fixed);
    }
  }
  return fragments;
}

const squeeze = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Why a step's output does not show what the README says it does (null when it does): each
 * fixed piece of the expected lines must appear, in order. Without expected lines, the step
 * must exit 0, and an API error (`{"code":…}`) the README does not show fails either way.
 */
export function mismatch(step: Step, output: string, exitCode: number): string | null {
  const text = squeeze(output);
  if (step.expected.length === 0) {
    if (exitCode !== 0) return `it exited with status ${exitCode}`;
  } else {
    let at = 0;
    for (const fragment of expectedFragments(step.expected)) {
      const found = text.indexOf(fragment, at);
      if (found < 0) return `its output lacks ${JSON.stringify(fragment)}${at > 0 ? ' (after what matched before)' : ''}`;
      at = found + fragment.length;
    }
  }
  if (/"code":"[A-Z_]+"/.test(output) && !step.expected.some((l) => l.includes('"code"') || l.includes('Invalid input data'))) {
    return 'it answered an API error the README does not show';
  }
  return null;
}
