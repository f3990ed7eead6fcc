/**
 * Splits a command line typed by a user into an argument vector, the way a POSIX shell
 * splits words, and does nothing else: no variables, globs, pipes, redirections or `;`.
 * The result goes to Docker as an argv; no shell ever sees it.
 *
 * - Words are separated by unquoted whitespace.
 * - `'…'` keeps everything inside literally.
 * - `"…"` keeps everything inside literally except `\"` and `\\`.
 * - Outside quotes, a backslash makes the next character literal (`a\ b` is one word).
 * - Quotes join with adjacent text (`--name="a b"` is one word `--name=a b`); `''` is an
 *   empty argument.
 * So `npm run start && rm -rf /` is five plain arguments to `npm`, not two commands.
 */

export class CommandSplitError extends Error {
  override name = 'CommandSplitError';
}

type Quote = '"' | "'" | null;

interface SplitState {
  words: string[];
  word: string | null;
  quote: Quote;
}

export function splitCommand(command: string): string[] {
  const state: SplitState = { words: [], word: null, quote: null };
  for (let i = 0; i < command.length; i += 1) {
    i = step(state, command, i);
  }
  if (state.quote !== null) {
    const kind = state.quote === '"' ? 'double' : 'single';
    throw new CommandSplitError(`Unterminated ${kind} quote in command: ${command}`);
  }
  if (state.word !== null) state.words.push(state.word);
  return state.words;
}

/** Consumes the character at `i` (and an escaped one after it); returns the last index used. */
function step(state: SplitState, text: string, i: number): number {
  const c = text[i];
  if (state.quote === "'") {
    if (c === "'") state.quote = null;
    else append(state, c);
    return i;
  }
  if (state.quote === '"') {
    if (c === '"') state.quote = null;
    else if (c === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) return appendNext(state, text, i);
    else append(state, c);
    return i;
  }
  if (/\s/.test(c)) {
    if (state.word !== null) state.words.push(state.word);
    state.word = null;
    return i;
  }
  if (c === '"' || c === "'") {
    state.quote = c;
    append(state, '');
    return i;
  }
  if (c === '\\' && i + 1 < text.length) return appendNext(state, text, i);
  append(state, c);
  return i;
}

function append(state: SplitState, text: string): void {
  state.word = (state.word ?? '') + text;
}

function appendNext(state: SplitState, text: string, i: number): number {
  append(state, text[i + 1]);
  return i + 1;
}
