import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { create } from './create.js';
import { remove } from './remove.js';
import { update } from './update.js';

export const mounts = defineRouter('mounts', {
  create,
  update,
  remove,
  all,
});
