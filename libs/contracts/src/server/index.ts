import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { create } from './create.js';
import { one } from './one.js';
import { regenerateJoinToken } from './regenerateJoinToken.js';
import { remove } from './remove.js';
import { update } from './update.js';

export const server = defineRouter('server', {
  create,
  one,
  all,
  update,
  remove,
  regenerateJoinToken,
});
