/**
 * A plain SQL dump cut into statements as its text arrives, in pieces of any size: what
 * pglite-restore.ts executes a batch at a time. It knows what a platform backup's dump holds
 * (PGlite's pg_dump with `--inserts`, then pglite-dump.ts's rows): '…' strings with '' (under
 * `standard_conforming_strings = on`, which pg_dump sets: a backslash is a character), E'…'
 * strings with backslash escapes (quote_nullable writes them for values with a backslash),
 * "…" identifiers with "", $tag$…$tag$ bodies, -- comments and nested block comments. A `;`
 * outside them ends a statement. Comments are left out of the statements.
 *
 * What the dump never holds is refused rather than guessed at: `COPY … FROM stdin` (rows that
 * are not SQL; PostgreSQL's own pg_dump writes them, and psql loads that dump) and psql's
 * backslash commands. A dump that ends inside a string, a comment or a statement was cut short.
 */

export interface Statement {
  sql: string;
  /** Its place in the dump (1 for the first), for a failure's message. */
  ordinal: number;
}

type Mode = 'code' | 'quote' | 'escaped' | 'ident' | 'dollar' | 'line' | 'block';

const ENDS_INSIDE: Partial<Record<Mode, string>> = {
  quote: 'a quoted string',
  escaped: 'a quoted string',
  ident: 'a quoted name',
  dollar: 'a dollar-quoted body',
  block: 'a block comment',
};

/** A character that continues a name or keyword: then `$` or `e'` belong to it. */
function continuesName(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f || code === 0x24 || code >= 0x80;
}

const CODE = /[;'"$\-/\\]/g;
const ESCAPED = /['\\]/g;
const BLOCK = /\/\*|\*\//g;
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/y;
/** An unfinished `$tag` at the end of the text read so far. */
const DOLLAR_TAG_START = /\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?$/y;
/** A piece that only goes on with an unfinished `$tag`'s characters. */
const TAG_CHARACTERS = /^[\w\u0080-\uffff]*$/;
const COPY_FROM_STDIN = /^COPY\b[^;]*\bFROM\s+STDIN\b/i;

export class SqlStatements {
  private mode: Mode = 'code';
  private tag = '';
  private depth = 0;
  /** The statement's text read so far, without its comments. */
  private parts: string[] = [];
  private content = false;
  /** Text not read yet: what a decision needs beyond the last piece (a character or a `$tag$`). */
  private carry = '';
  /** The last two characters read, for what comes right before the next piece. */
  private behind = '';
  private count = 0;
  /** Pieces that only made an unfinished `$tag` in `carry` longer. */
  private longer: string[] = [];

  /** The statements that end in this piece of the dump. */
  push(piece: string): Statement[] {
    // An unfinished `$tag` that a piece only makes longer is read once, when it ends, not again with every piece.
    if (this.mode === 'code' && this.carry.charCodeAt(0) === 0x24 && TAG_CHARACTERS.test(piece)) {
      this.longer.push(piece);
      return [];
    }
    return this.read(this.carried() + piece, false);
  }

  /** The dump's end: throws when it is cut short. */
  end(): Statement[] {
    const out = this.read(this.carried(), true);
    const inside = ENDS_INSIDE[this.mode];
    if (inside) throw new Error(`the dump ends inside ${inside}: it is incomplete`);
    if (this.content) throw new Error('the dump ends in the middle of a statement: it is incomplete');
    return out;
  }

  private carried(): string {
    if (this.longer.length === 0) return this.carry;
    const text = this.carry + this.longer.join('');
    this.longer = [];
    return text;
  }

  private read(s: string, final: boolean): Statement[] {
    const out: Statement[] = [];
    let i = 0;
    let keep = 0;
    const before = (j: number): number => (j >= 0 ? s.charCodeAt(j) : this.behind.charCodeAt(this.behind.length + j));
    /** Whether the character at j can be looked at: when it is in the next piece, the reading stops before the decision. */
    const has = (j: number) => j < s.length || final;

    scan: while (i < s.length) {
      switch (this.mode) {
        case 'code': {
          CODE.lastIndex = i;
          const m = CODE.exec(s);
          const j = m ? m.index : s.length;
          if (!this.content && /\S/.test(s.slice(i, j))) this.content = true;
          if (!m) {
            i = s.length;
            break;
          }
          const c = s[j];
          if (c === ';') {
            this.parts.push(s.slice(keep, j + 1));
            const statement = this.finish();
            if (statement) out.push(statement);
            i = keep = j + 1;
          } else if (c === "'") {
            const e = before(j - 1);
            this.mode = (e === 0x45 || e === 0x65) && !continuesName(before(j - 2)) ? 'escaped' : 'quote';
            this.content = true;
            i = j + 1;
          } else if (c === '"') {
            this.mode = 'ident';
            this.content = true;
            i = j + 1;
          } else if (c === '$') {
            this.content = true;
            DOLLAR_TAG.lastIndex = j;
            const tag = continuesName(before(j - 1)) ? null : DOLLAR_TAG.exec(s);
            if (tag) {
              this.mode = 'dollar';
              this.tag = tag[0];
              i = j + tag[0].length;
            } else if (!final && !continuesName(before(j - 1)) && ((DOLLAR_TAG_START.lastIndex = j), DOLLAR_TAG_START.test(s))) {
              i = j;
              break scan;
            } else i = j + 1;
          } else if (c === '-' || c === '/') {
            if (!has(j + 1)) {
              i = j;
              break scan;
            }
            const comment = c === '-' ? s[j + 1] === '-' : s[j + 1] === '*';
            if (comment) {
              this.parts.push(s.slice(keep, j), ' ');
              this.mode = c === '-' ? 'line' : 'block';
              this.depth = 1;
              i = j + 2;
            } else {
              this.content = true;
              i = j + 1;
            }
          } else {
            // A backslash: inside a statement SQL refuses it itself; before one it is a psql command.
            if (!this.content) throw new Error(`statement ${this.count + 1} is a psql command (${s.slice(j, j + 20).split(/\s/)[0]}), not SQL: load this dump with psql`);
            i = j + 1;
          }
          break;
        }
        case 'quote':
        case 'ident': {
          const q = this.mode === 'quote' ? "'" : '"';
          const j = s.indexOf(q, i);
          if (j < 0) {
            i = s.length;
            break;
          }
          if (!has(j + 1)) {
            i = j;
            break scan;
          }
          if (s[j + 1] === q) i = j + 2;
          else {
            this.mode = 'code';
            i = j + 1;
          }
          break;
        }
        case 'escaped': {
          ESCAPED.lastIndex = i;
          const m = ESCAPED.exec(s);
          if (!m) {
            i = s.length;
            break;
          }
          const j = m.index;
          if (!has(j + 1)) {
            i = j;
            break scan;
          }
          if (s[j] === '\\' || s[j + 1] === "'") i = j + 2;
          else {
            this.mode = 'code';
            i = j + 1;
          }
          break;
        }
        case 'dollar': {
          const j = s.indexOf(this.tag, i);
          if (j >= 0) {
            this.mode = 'code';
            i = j + this.tag.length;
          } else {
            // The end of the piece may hold the start of the closing tag, which begins at its last
            // `$` (a tag's name holds none): read up to it, carrying no more than that start.
            const d = s.lastIndexOf('$');
            i = !final && d >= i && this.tag.startsWith(s.slice(d)) ? d : s.length;
            break scan;
          }
          break;
        }
        case 'line': {
          const j = s.indexOf('\n', i);
          if (j < 0) i = s.length;
          else {
            this.mode = 'code';
            i = keep = j;
          }
          break;
        }
        case 'block': {
          BLOCK.lastIndex = i;
          const m = BLOCK.exec(s);
          if (!m) {
            const last = s[s.length - 1];
            i = !final && (last === '/' || last === '*') ? s.length - 1 : s.length;
            break scan;
          }
          i = m.index + 2;
          this.depth += m[0] === '/*' ? 1 : -1;
          if (this.depth === 0) {
            this.mode = 'code';
            keep = i;
          }
          break;
        }
      }
    }
    if (this.mode !== 'line' && this.mode !== 'block' && i > keep) this.parts.push(s.slice(keep, i));
    const read = s.slice(Math.max(0, i - 2), i);
    this.behind = (this.behind + read).slice(-2);
    this.carry = s.slice(i);
    return out;
  }

  private finish(): Statement | undefined {
    const sql = this.parts.join('').trim();
    const content = this.content;
    this.parts = [];
    this.content = false;
    if (!content) return undefined;
    this.count += 1;
    if (COPY_FROM_STDIN.test(sql)) {
      throw new Error(`statement ${this.count} is a COPY … FROM stdin, which only psql loads: this dump was not written by Skiff's embedded database, load it with psql into PostgreSQL`);
    }
    return { sql, ordinal: this.count };
  }
}

/** The statements of a dump's text, as its pieces arrive. */
export async function* sqlStatements(text: AsyncIterable<string>): AsyncGenerator<Statement> {
  const splitter = new SqlStatements();
  for await (const piece of text) yield* splitter.push(piece);
  yield* splitter.end();
}
