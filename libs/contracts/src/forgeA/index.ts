import { defineRouter } from '../contract.js';
import { create } from './create.js';
import { forgeAProviders } from './forgeAProviders.js';
import { getForgeABranches } from './getForgeABranches.js';
import { getForgeARepositories } from './getForgeARepositories.js';
import { one } from './one.js';
import { testConnection } from './testConnection.js';
import { update } from './update.js';

export const forgeA = defineRouter('forgeA', {
  create,
  one,
  forgeAProviders,
  getForgeARepositories,
  getForgeABranches,
  testConnection,
  update,
});
