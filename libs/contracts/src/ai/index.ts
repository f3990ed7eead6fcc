import { defineRouter } from '../contract.js';
import { create } from './create.js';
import { delete_ } from './delete.js';
import { deploy } from './deploy.js';
import { get } from './get.js';
import { getAll } from './getAll.js';
import { getModels } from './getModels.js';
import { one } from './one.js';
import { suggest } from './suggest.js';
import { update } from './update.js';

export const ai = defineRouter('ai', {
  one,
  get,
  getAll,
  getModels,
  create,
  update,
  delete: delete_,
  suggest,
  deploy,
});
