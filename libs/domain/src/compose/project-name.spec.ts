import { describe, expect, it } from 'vitest';
import { refuseProjectName } from './project-name.js';

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
