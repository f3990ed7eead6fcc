import { defineRouter } from '../contract.js';
import { create } from './create.js';
import { forgeDProviders } from './forgeDProviders.js';
import { getForgeDBranches } from './getForgeDBranches.js';
import { getForgeDRepositories } from './getForgeDRepositories.js';
import { one } from './one.js';
import { testConnection } from './testConnection.js';
import { update } from './update.js';

export const forgeD = defineRouter('forgeD', {
  create,
  one,
  forgeDProviders,
  getForgeDRepositories,
  getForgeDBranches,
  testConnection,
  update,
});
