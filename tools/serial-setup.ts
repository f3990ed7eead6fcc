// Setup file of the test files that share the machine (vitest.config.ts): each waits for its
// turn before it is imported, and gives it back after its last hook (or when it exits).
import { afterAll, inject } from 'vitest';
import { takeTurn } from '@skiff/testing';

const turn = await takeTurn(inject('turnSocket'));
afterAll(() => turn.end());
