import { describe, expect, it } from 'vitest';
import { builtImageName } from './deploy-application.js';

describe('builtImageName', () => {
  it('is <appName>:<deploymentId> with a repository name Docker takes', () => {
    expect(builtImageName('shop-web', 'dep_0a1b2c')).toBe('shop-web:dep_0a1b2c');
    expect(builtImageName('Shop_Web.v2', 'dep_X')).toBe('shop-web-v2:dep_X');
    expect(builtImageName('--__..', 'dep_1')).toBe('app:dep_1');
    expect(builtImageName('web', '.-weird id!')).toBe('web:weird-id-');
  });
});
