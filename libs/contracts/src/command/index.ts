import { defineRouter } from '../contract.js';
import { one } from './one.js';

export const command = defineRouter('command', {
  one,
});
