// The appName rule is written once, in libs/domain (app-name.ts). libs/contracts depends on
// zod only, so its `AppName` repeats the pattern, the length and the message: this test
// fails when the copy drifts from the rule.
import { APP_NAME_PATTERN, AppName } from '@skiff/contracts';
import { APP_NAME, APP_NAME_MAX, APP_NAME_MESSAGE, refuseAppName } from '@skiff/domain';
import { describe, expect, it } from 'vitest';

describe("the contracts' AppName is libs/domain's appName rule", () => {
  it('has the same pattern', () => {
    expect(APP_NAME_PATTERN.source).toBe(APP_NAME.source);
    expect(APP_NAME_PATTERN.flags).toBe(APP_NAME.flags);
  });

  it('takes and refuses the same names, with the same message', () => {
    const names = ['', 'a', 'Shop.web_2-x', '..', 'a b', 'a/b', 'é', 'a'.repeat(APP_NAME_MAX), 'a'.repeat(APP_NAME_MAX + 1)];
    for (const name of names) expect(AppName.safeParse(name).success, name).toBe(refuseAppName(name) === null);
    expect(AppName.safeParse('a b').error?.issues[0]?.message).toBe(APP_NAME_MESSAGE);
  });
});
