import picomatch from 'picomatch';

/** Bounds that keep matching cheap whatever the globs and file names are. */
export const WATCH_LIMITS = { patterns: 50, patternLength: 200, wildcards: 10, pathLength: 1024 };

// Glob rules (picomatch, POSIX): paths are relative to the repository root, `/`-separated;
// `*` matches within one path segment, `**` any number of segments, `?` one character,
// `{a,b}` either, `[abc]` a class; a leading `!` excludes what the rest matches (a file
// matches when some pattern matches it and no `!` pattern does); dot files match too.
// A pattern without `/` matches at the root only: `*.md` is not `docs/x.md`, `**/*.md` is.
// A pattern over the bounds (WATCH_LIMITS) never matches; the recorded reason names it.

/** Why a watch path cannot be used, or null. */
export function watchPathProblem(pattern: string): string | null {
  if (pattern.trim() === '') return 'a watch path is empty';
  if (pattern.length > WATCH_LIMITS.patternLength) return `a watch path is longer than ${WATCH_LIMITS.patternLength} characters`;
  const wildcards = pattern.match(/[*?]/g)?.length ?? 0;
  if (wildcards > WATCH_LIMITS.wildcards) return `a watch path has more than ${WATCH_LIMITS.wildcards} wildcards`;
  return null;
}

/** The first changed file some watch path matches (and no `!` path excludes), or null. */
export function firstWatchedFile(patterns: readonly string[], files: readonly string[]): string | null {
  const usable = patterns.slice(0, WATCH_LIMITS.patterns).filter((p) => watchPathProblem(p) === null);
  const include = usable.filter((p) => !p.startsWith('!'));
  const exclude = usable.filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  if (include.length === 0) return null;
  const options = { dot: true, maxLength: WATCH_LIMITS.patternLength };
  const included = picomatch(include, options);
  const excluded = exclude.length > 0 ? picomatch(exclude, options) : () => false;
  for (const file of files) {
    if (file.length > WATCH_LIMITS.pathLength) continue;
    const path = file.replace(/^\.\//, '');
    if (included(path) && !excluded(path)) return path;
  }
  return null;
}
