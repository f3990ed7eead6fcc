import { describe, expect, it } from 'vitest';
import { APP_NAME_MAX, refuseAppName, refuseProjectName, refuseServiceName } from './app-name.js';

/** swarmkit's own rule, as Go writes it (exponential in JavaScript: only short inputs here). */
const SWARMKIT = /^[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9]+)*$/;

describe('refuseAppName', () => {
  it("takes the spec's AppName: 1 to 63 letters, digits, '.', '_', '-'", () => {
    for (const name of ['shop', 'Shop.web_2-x', '.', 'a'.repeat(APP_NAME_MAX)]) expect(refuseAppName(name)).toBeNull();
  });

  it('refuses other characters, the empty name and more than 63 characters', () => {
    for (const name of ['', 'a b', 'a/b', 'é', 'a'.repeat(APP_NAME_MAX + 1)]) expect(refuseAppName(name)).not.toBeNull();
  });
});

describe('refuseServiceName', () => {
  it("takes swarmkit's service names", () => {
    for (const name of ['shop', 'Shop-2', 'a__b--c', '9', 'a'.repeat(63)]) expect(refuseServiceName(name)).toBeNull();
  });

  it('refuses dots, a leading or trailing - or _, the empty name, more than 63 characters', () => {
    for (const name of ['shop.web', '-shop', 'shop_', '', '..', 'a'.repeat(64)]) {
      expect(refuseServiceName(name)).toMatch(/^invalid service name/);
    }
  });

  it("is swarmkit's language: the same answer on every short name of its alphabet", () => {
    const alphabet = ['a', 'Z', '0', '-', '_', '.'];
    let names = [''];
    for (let length = 1; length <= 5; length++) {
      names = names.flatMap((n) => alphabet.map((c) => n + c));
      for (const name of names) expect(refuseServiceName(name) === null, name).toBe(SWARMKIT.test(name));
    }
  });

  it("answers at once on the input that takes swarmkit's pattern minutes in JavaScript", () => {
    const started = performance.now();
    for (let n = 1; n <= 62; n++) expect(refuseServiceName(`${'a'.repeat(n)}.`)).not.toBeNull();
    expect(performance.now() - started).toBeLessThan(100);
  });
});

describe('refuseProjectName', () => {
  it('takes what Compose takes as a project name', () => {
    for (const name of ['shop', 'shop-2', 'shop_web', '9lives', 'a'.repeat(63)]) expect(refuseProjectName(name)).toBeNull();
  });

  it('refuses capitals, dots, a leading - or _, and more than 63 characters', () => {
    for (const name of ['Shop', 'shop.web', '-shop', '_shop', '', 'a'.repeat(64)]) {
      expect(refuseProjectName(name)).toMatch(/cannot name a compose project/);
    }
  });
});
