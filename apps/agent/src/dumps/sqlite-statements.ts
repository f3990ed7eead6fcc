/**
 * SQLite statements out of a dump read in pieces (libsql-server's `GET /dump`): a statement
 * ends at a `;` outside strings ('…', with '' inside), quoted names ("…", `…`, […]) and
 * comments (-- and /* *\/), except inside the body of a CREATE [TEMP] TRIGGER, which ends
 * only at `; END ;`. This is the rule SQLite's own shell uses to know a statement is
 * complete; the dump's lines cannot be trusted for it, since a schema's text keeps the
 * line breaks its author wrote.
 */

/** What the statement read so far says about where it may end. */
const enum Phase {
  /** Nothing but spaces and comments yet. */
  Start,
  /** An ordinary statement: its next `;` ends it. */
  Normal,
  Explain,
  Create,
  /** Inside CREATE [TEMP] TRIGGER, not right after a `;`. */
  Trigger,
  /** Inside a trigger, right after a `;`. */
  Semi,
  /** Inside a trigger, after `; END`. */
  End,
}

/** Where the reader is inside a token. */
const enum Lexeme {
  Code,
  /** Inside '…', "…" or `…`: `quote` closes it, unless doubled. */
  Quoted,
  /** Just after a closing quote: the same quote again continues the string. */
  QuoteClosed,
  Bracket,
  LineComment,
  BlockComment,
}

type Token = 'semi' | 'space' | 'other' | 'explain' | 'create' | 'temp' | 'trigger' | 'end';

const KEYWORDS: Record<string, Token> = { EXPLAIN: 'explain', CREATE: 'create', TEMP: 'temp', TEMPORARY: 'temp', TRIGGER: 'trigger', END: 'end' };

function next(phase: Phase, token: Token): Phase {
  if (token === 'space') return phase;
  switch (phase) {
    case Phase.Start:
    case Phase.Normal:
      if (token === 'semi') return Phase.Start;
      if (phase === Phase.Normal) return Phase.Normal;
      return token === 'explain' ? Phase.Explain : token === 'create' ? Phase.Create : Phase.Normal;
    case Phase.Explain:
      if (token === 'semi') return Phase.Start;
      return token === 'create' ? Phase.Create : token === 'other' ? Phase.Explain : Phase.Normal;
    case Phase.Create:
      if (token === 'semi') return Phase.Start;
      return token === 'temp' ? Phase.Create : token === 'trigger' ? Phase.Trigger : Phase.Normal;
    case Phase.Trigger:
      return token === 'semi' ? Phase.Semi : Phase.Trigger;
    case Phase.Semi:
      return token === 'semi' ? Phase.Semi : token === 'end' ? Phase.End : Phase.Trigger;
    case Phase.End:
      return token === 'semi' ? Phase.Start : Phase.Trigger;
  }
}

const isWordChar = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c >= 128;
const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 12;

/** The longest keyword; longer words are only ever `other`. */
const KEYWORD_MAX = 9;

export class SqliteStatements {
  private phase = Phase.Start;
  private lexeme = Lexeme.Code;
  private quote = 0;
  /** The word being read (upper case, up to KEYWORD_MAX + 1 characters), or '' outside one. */
  private word = '';
  private inWord = false;
  /** A `-` or `/` that may open a comment, or a `*` that may close one: decided by the next character. */
  private pending = 0;
  /** The current statement's text from earlier pieces. */
  private carried: string[] = [];
  private carriedLength = 0;

  /** The length of the current, unfinished statement (what a caller holds in memory). */
  get pendingLength(): number {
    return this.carriedLength;
  }

  /** Between statements: nothing of the next one read yet but spaces. */
  get atStart(): boolean {
    return this.phase === Phase.Start && this.lexeme === Lexeme.Code && this.pending === 0 && !this.inWord && this.carried.join('').trim() === '';
  }

  /** The statements that `text` completes, each with its `;`, trimmed; empty ones left out. */
  push(text: string): string[] {
    const done: string[] = [];
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.step(c)) {
        const statement = (this.carried.join('') + text.slice(from, i + 1)).trim();
        this.carried = [];
        this.carriedLength = 0;
        from = i + 1;
        if (statement !== ';') done.push(statement);
      }
    }
    if (from < text.length) {
      this.carried.push(text.slice(from));
      this.carriedLength += text.length - from;
    }
    return done;
  }

  /** What is left after the last piece: null when nothing but spaces and comments, else the unfinished statement. */
  end(): string | null {
    if (this.pending !== 0 && this.lexeme === Lexeme.Code) this.token('other');
    this.pending = 0;
    if (this.lexeme === Lexeme.QuoteClosed) {
      this.lexeme = Lexeme.Code;
      this.token('other');
    }
    if (this.inWord) this.endWord();
    const rest = this.carried.join('').trim();
    this.carried = [];
    this.carriedLength = 0;
    return this.phase === Phase.Start && this.lexeme !== Lexeme.Quoted && this.lexeme !== Lexeme.Bracket && this.lexeme !== Lexeme.BlockComment ? null : rest;
  }

  /** Reads one character; true when it ended a statement. */
  private step(c: number): boolean {
    switch (this.lexeme) {
      case Lexeme.Quoted:
        if (c === this.quote) this.lexeme = Lexeme.QuoteClosed;
        return false;
      case Lexeme.QuoteClosed:
        if (c === this.quote) {
          this.lexeme = Lexeme.Quoted;
          return false;
        }
        this.lexeme = Lexeme.Code;
        this.token('other');
        return this.code(c);
      case Lexeme.Bracket:
        if (c === 93) {
          this.lexeme = Lexeme.Code;
          this.token('other');
        }
        return false;
      case Lexeme.LineComment:
        if (c === 10) this.lexeme = Lexeme.Code;
        return false;
      case Lexeme.BlockComment:
        if (this.pending === 42 && c === 47) {
          this.pending = 0;
          this.lexeme = Lexeme.Code;
          return false;
        }
        this.pending = c === 42 ? 42 : 0;
        return false;
      case Lexeme.Code:
        return this.code(c);
    }
  }

  private code(c: number): boolean {
    if (this.pending !== 0) {
      const opener = this.pending;
      this.pending = 0;
      if (opener === 45 && c === 45) {
        this.lexeme = Lexeme.LineComment;
        return false;
      }
      if (opener === 47 && c === 42) {
        this.lexeme = Lexeme.BlockComment;
        return false;
      }
      // The `-` or `/` was an operator.
      this.token('other');
    }
    if (isWordChar(c)) {
      if (!this.inWord) {
        this.inWord = true;
        this.word = '';
      }
      if (this.word.length <= KEYWORD_MAX) this.word += String.fromCharCode(c).toUpperCase();
      return false;
    }
    if (this.inWord) this.endWord();
    if (isSpace(c)) return false;
    switch (c) {
      case 59:
        this.token('semi');
        return this.phase === Phase.Start;
      case 39:
      case 34:
      case 96:
        this.quote = c;
        this.lexeme = Lexeme.Quoted;
        return false;
      case 91:
        this.lexeme = Lexeme.Bracket;
        return false;
      case 45:
      case 47:
        this.pending = c;
        return false;
      default:
        this.token('other');
        return false;
    }
  }

  private endWord(): void {
    this.inWord = false;
    this.token(KEYWORDS[this.word] ?? 'other');
  }

  private token(token: Token): void {
    this.phase = next(this.phase, token);
  }
}

/**
 * `statement` with each '…' literal holding a NUL written as CAST(X'…' AS TEXT): libsql-server's
 * dump writes a text's NULs as they are, and SQLite's tokenizer ends a statement's text at one.
 */
export function withoutNuls(statement: string): string {
  if (!statement.includes('\0')) return statement;
  const out: string[] = [];
  let i = 0;
  while (i < statement.length) {
    const c = statement[i]!;
    const closer = c === "'" || c === '"' || c === '`' ? c : c === '[' ? ']' : statement.startsWith('--', i) ? '\n' : statement.startsWith('/*', i) ? '*/' : null;
    if (closer === null) {
      out.push(c);
      i++;
      continue;
    }
    let end = statement.indexOf(closer, i + 1);
    // A doubled quote goes on inside the literal or name.
    while (end >= 0 && (c === "'" || c === '"' || c === '`') && statement[end + 1] === c) end = statement.indexOf(closer, end + 2);
    end = end < 0 ? statement.length : end + closer.length;
    const token = statement.slice(i, end);
    out.push(c === "'" && token.includes('\0') ? `CAST(X'${Buffer.from(token.slice(1, -1).replace(/''/g, "'")).toString('hex')}' AS TEXT)` : token);
    i = end;
  }
  return out.join('');
}

/** A dump's statement, or the CREATE VIRTUAL TABLE of a virtual table it writes into sqlite_schema. */
export type DumpStatement = { sql: string } | { virtualTable: string };

const SCHEMA_ROW = /^INSERT\s+INTO\s+sqlite_(?:schema|master)\s*\(/i;
const SCHEMA_ROW_END = /'\);\s*$/;
/** A virtual table's row, its values SQL literals (as sqlite3's .dump writes it). */
const QUOTED_ROW = /^INSERT\s+INTO\s+sqlite_(?:schema|master)\s*\(type,name,tbl_name,rootpage,sql\)\s*VALUES\s*\('table','(?:[^']|'')*','(?:[^']|'')*',0,'((?:[^']|'')*)'\)\s*;\s*$/is;
/** The same as libsql-server writes it: the name and the statement in quotes, their own quotes not doubled. */
const RAW_ROW_HEAD = /^INSERT\s+INTO\s+sqlite_(?:schema|master)\s*\(type,name,tbl_name,rootpage,sql\)\s*VALUES\s*\('table','/i;
const RAW_ROW_SQL = /,0,'CREATE\s+VIRTUAL\s+TABLE\s/i;
const RAW_ROW_END = "');";

/** The CREATE VIRTUAL TABLE statement of libsql-server's row: from the first `,0,'CREATE VIRTUAL TABLE` to the row's `');`. */
function rawVirtualTable(row: string): string | null {
  const at = RAW_ROW_HEAD.test(row) ? row.search(RAW_ROW_SQL) : -1;
  const tail = at < 0 ? '' : row.slice(at + 4).trimEnd();
  return tail.endsWith(RAW_ROW_END) ? tail.slice(0, -RAW_ROW_END.length) : null;
}

/** The CREATE VIRTUAL TABLE statement of a dump's `INSERT INTO sqlite_schema`, or null when it is not a virtual table's. */
export function virtualTableOf(row: string): string | null {
  const sql = QUOTED_ROW.exec(row)?.[1]?.replace(/''/g, "'") ?? rawVirtualTable(row);
  return sql && /^CREATE\s+VIRTUAL\s+TABLE\s/i.test(sql) ? sql : null;
}

/**
 * The statements of a SQLite dump (SqliteStatements), but a row it writes into sqlite_schema
 * (a virtual table's, under PRAGMA writable_schema), which is read by lines: libsql-server
 * writes its name and statement in quotes without doubling their own quotes (`content='src'`).
 */
export class DumpStatements {
  private readonly statements = new SqliteStatements();
  /** The text after the last line break. */
  private line = '';
  /** The lines of a sqlite_schema row being read. */
  private schemaRow: string | null = null;

  /** The statements that `text` completes; throws at a sqlite_schema row that is not a virtual table's. */
  push(text: string): DumpStatement[] {
    const lines = (this.line + text).split('\n');
    this.line = lines.pop()!;
    return lines.flatMap((line) => this.takeLine(`${line}\n`));
  }

  /** The statements of the last line, and what is left unfinished (null when nothing). */
  end(): { statements: DumpStatement[]; rest: string | null } {
    const statements = this.line ? this.takeLine(this.line) : [];
    this.line = '';
    const rest = this.statements.end();
    return { statements, rest: this.schemaRow ?? rest };
  }

  private takeLine(line: string): DumpStatement[] {
    if (this.schemaRow === null && !(this.statements.atStart && SCHEMA_ROW.test(line))) return this.statements.push(line).map((sql) => ({ sql }));
    this.schemaRow = (this.schemaRow ?? '') + line;
    if (!SCHEMA_ROW_END.test(line)) return [];
    const row = this.schemaRow.trim();
    this.schemaRow = null;
    const virtualTable = virtualTableOf(row);
    if (!virtualTable) throw new Error(`the dump writes into sqlite_schema what is not a virtual table (${JSON.stringify(row.slice(0, 120))})`);
    return [{ virtualTable }];
  }
}
