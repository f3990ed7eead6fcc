#!/usr/bin/env node
// The `skiff` command: runs the CLI's TypeScript source (the contracts it reads are TypeScript).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
await main();
