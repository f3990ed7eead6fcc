/** One `-----BEGIN <label>-----` … `-----END <label>-----` block of a PEM text. */
export interface PemBlock {
  label: string;
  text: string;
}

const BEGIN = /-----BEGIN ([A-Z0-9 ]+)-----/g;
const END = /-----END ([A-Z0-9 ]+)-----/g;

/**
 * The PEM blocks of a text, in order; text between blocks (comments, bag attributes) is skipped.
 * Each BEGIN pairs with the first END of its label after it. Found in two passes over the text
 * (all ENDs, then the BEGINs), not with `BEGIN (x)[\s\S]*?END \1`, which retries the rest of
 * the text from every BEGIN that has no END (cubic: tools/redos.spec.ts).
 */
export function pemBlocks(text: string): PemBlock[] {
  const ends = new Map<string, { at: number[]; next: number }>();
  for (const m of text.matchAll(END)) {
    const label = ends.get(m[1]!) ?? { at: [], next: 0 };
    label.at.push(m.index);
    ends.set(m[1]!, label);
  }
  const blocks: PemBlock[] = [];
  const begin = new RegExp(BEGIN.source, 'g');
  for (let m = begin.exec(text); m; m = begin.exec(text)) {
    const label = ends.get(m[1]!);
    if (!label) continue;
    const from = m.index + m[0].length;
    while (label.next < label.at.length && label.at[label.next]! < from) label.next++;
    const end = label.at[label.next];
    if (end === undefined) continue;
    const stop = end + `-----END ${m[1]}-----`.length;
    blocks.push({ label: m[1]!, text: `${text.slice(m.index, stop)}\n` });
    begin.lastIndex = stop;
  }
  return blocks;
}

/** Labels of PEM blocks holding a private key (PKCS#8, encrypted PKCS#8, PKCS#1, SEC1, OpenSSH). */
export const isPrivateKeyLabel = (label: string) => label.endsWith('PRIVATE KEY');
