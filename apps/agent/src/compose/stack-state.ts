/**
 * `stack.json` in a stack's directory: written by each deploy once its files are in place, so
 * the later commands of the stack (stop, start, reload, remove), which carry only the workload's
 * kind, id and appName, know how it runs and where its files are. It holds no secret.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { ComposeTypeName } from '@skiff/domain';
import type { StackDir } from './stack-dir.js';

export interface StackState {
  type: ComposeTypeName;
  /** The workload id (`skiff.id`) and the project (or stack) name. */
  id: string;
  project: string;
  /** The converted file and the `.env` file, relative to the stack's directory. */
  file: string;
  envFile: string;
  /** The deployment that wrote it. */
  deploymentId: string;
}

export async function writeStackState(dir: StackDir, state: StackState): Promise<void> {
  const temporary = `${dir.state}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, dir.state);
}

/** The state a deploy wrote, or null when there is none (never deployed here, or removed). */
export async function readStackState(dir: StackDir): Promise<StackState | null> {
  let text: string;
  try {
    text = await readFile(dir.state, 'utf8');
  } catch {
    return null;
  }
  const value = JSON.parse(text) as Partial<StackState>;
  if ((value.type !== 'container-compose' && value.type !== 'stack') || typeof value.file !== 'string' || typeof value.envFile !== 'string') {
    throw new Error(`${dir.state} is not a stack state this agent wrote`);
  }
  return value as StackState;
}
