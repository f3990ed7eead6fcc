import { defineRouter } from '../contract.js';
import { create } from './create.js';
import { forgeAProviders } from './forgeAProviders.js';
import { one } from './one.js';
import { update } from './update.js';

export const forgeA = defineRouter('forgeA', {
  create,
  one,
  forgeAProviders,
  update,
});
