import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { delete_ } from './delete.js';
import { one } from './one.js';

export const previewDeployment = defineRouter('previewDeployment', {
  all,
  delete: delete_,
  one,
});
