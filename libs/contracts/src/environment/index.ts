import { defineRouter } from '../contract.js';
import { byProjectId } from './byProjectId.js';
import { create } from './create.js';
import { duplicate } from './duplicate.js';
import { one } from './one.js';
import { remove } from './remove.js';
import { update } from './update.js';

export const environment = defineRouter('environment', {
  create,
  one,
  byProjectId,
  remove,
  update,
  duplicate,
});
