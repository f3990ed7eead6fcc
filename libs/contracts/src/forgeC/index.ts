import { defineRouter } from '../contract.js';
import { create } from './create.js';
import { forgeCProviders } from './forgeCProviders.js';
import { getForgeCBranches } from './getForgeCBranches.js';
import { getForgeCRepositories } from './getForgeCRepositories.js';
import { one } from './one.js';
import { testConnection } from './testConnection.js';
import { update } from './update.js';

export const forgeC = defineRouter('forgeC', {
  create,
  one,
  forgeCProviders,
  getForgeCRepositories,
  getForgeCBranches,
  testConnection,
  update,
});
