/**
 * Ids of records that exist, by field name, learned from every successful answer, so that
 * generated inputs reach past "no such record" into the operations' deeper paths.
 * Records created before the run (`anchor`) are never offered to removals: the run keeps them.
 */
export class IdPool {
  private readonly byField = new Map<string, { value: string; anchor: boolean }[]>();

  /** Every string under a key ending in `Id` (and `appName`), a few objects deep. */
  learn(value: unknown, anchor = false, depth = 0): void {
    if (depth > 4 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value.slice(0, 20)) this.learn(item, anchor, depth + 1);
      return;
    }
    for (const [key, v] of Object.entries(value)) {
      if (typeof v === 'string' && v.length > 0 && v.length < 200 && (/Id$/.test(key) || key === 'appName')) this.add(key, v, anchor);
      else this.learn(v, anchor, depth + 1);
    }
  }

  add(field: string, value: string, anchor = false): void {
    const list = this.byField.get(field) ?? [];
    const known = list.find((e) => e.value === value);
    if (known) known.anchor ||= anchor;
    else if (list.length < 50) list.push({ value, anchor });
    this.byField.set(field, list);
  }

  /**
   * Known ids for a field: its own name's, else those of a name it ends with
   * (`targetEnvironmentId` takes `environmentId`'s). For a removal, only records the run made.
   */
  candidates(field: string, forRemoval: boolean): string[] {
    let list = this.byField.get(field);
    if (!list) {
      const lower = field.toLowerCase();
      const match = [...this.byField.keys()].filter((k) => k.length > 2 && lower.endsWith(k.toLowerCase())).sort((a, b) => b.length - a.length)[0];
      list = match === undefined ? [] : this.byField.get(match)!;
    }
    return list.filter((e) => !(forRemoval && e.anchor)).map((e) => e.value);
  }

  /** Ids of records the run made (not anchors) under a field name. */
  made(field: string): string[] {
    return (this.byField.get(field) ?? []).filter((e) => !e.anchor).map((e) => e.value);
  }
}
