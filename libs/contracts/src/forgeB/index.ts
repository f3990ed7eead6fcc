import { defineRouter } from '../contract.js';
import { create } from './create.js';
import { forgeBProviders } from './forgeBProviders.js';
import { getForgeBBranches } from './getForgeBBranches.js';
import { getForgeBRepositories } from './getForgeBRepositories.js';
import { one } from './one.js';
import { testConnection } from './testConnection.js';
import { update } from './update.js';

export const forgeB = defineRouter('forgeB', {
  create,
  one,
  forgeBProviders,
  getForgeBRepositories,
  getForgeBBranches,
  testConnection,
  update,
});
