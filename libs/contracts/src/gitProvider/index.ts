import { defineRouter } from '../contract.js';
import { getAll } from './getAll.js';
import { remove } from './remove.js';

export const gitProvider = defineRouter('gitProvider', {
  getAll,
  remove,
});
