// Checks contract modules: every example parses, names are filled in.
// Usage: npx tsx tools/check-contracts.ts [router ...]   (no argument: every router)
import type { Contract } from '@skiff/contracts';

const routers = process.argv.slice(2);
const modules = routers.length
  ? await Promise.all(
      routers.map(async (r) => ({ [r]: (await import(`../libs/contracts/src/${r}/index.ts`))[r] })),
    )
  : [(await import('../libs/contracts/src/index.ts')).contracts];

let failures = 0;
let count = 0;
for (const mod of modules) {
  for (const [router, ops] of Object.entries(mod as Record<string, Record<string, Contract>>)) {
    if (!ops) {
      console.error(`${router}: router export missing`);
      failures++;
      continue;
    }
    for (const [op, c] of Object.entries(ops)) {
      count++;
      if (c.name !== `${router}.${op}`) {
        console.error(`${router}.${op}: name is "${c.name}"`);
        failures++;
      }
      const r = c.input.safeParse(c.example);
      if (!r.success) {
        console.error(`${c.name}: example does not parse: ${JSON.stringify(r.error.issues)}`);
        failures++;
      }
    }
  }
}
console.log(`${count} contracts checked, ${failures} problems`);
process.exit(failures ? 1 : 0);
