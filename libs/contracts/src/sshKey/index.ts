import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { create } from './create.js';
import { generate } from './generate.js';
import { one } from './one.js';
import { remove } from './remove.js';
import { update } from './update.js';

export const sshKey = defineRouter('sshKey', {
  create,
  generate,
  one,
  all,
  update,
  remove,
});
