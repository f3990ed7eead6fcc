import { defineRouter } from '../contract.js';
import { create } from './create.js';
import { forgeDProviders } from './forgeDProviders.js';
import { one } from './one.js';
import { update } from './update.js';

export const forgeD = defineRouter('forgeD', {
  create,
  one,
  forgeDProviders,
  update,
});
