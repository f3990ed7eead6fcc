import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { apiKeys } from './apiKeys.js';
import { assignPermissions } from './assignPermissions.js';
import { checkUserOrganizations } from './checkUserOrganizations.js';
import { createApiKey } from './createApiKey.js';
import { deleteApiKey } from './deleteApiKey.js';
import { generateToken } from './generateToken.js';
import { get } from './get.js';
import { getBackups } from './getBackups.js';
import { getContainerMetrics } from './getContainerMetrics.js';
import { getInvitations } from './getInvitations.js';
import { getMetricsToken } from './getMetricsToken.js';
import { getServerMetrics } from './getServerMetrics.js';
import { getUserByToken } from './getUserByToken.js';
import { haveRootAccess } from './haveRootAccess.js';
import { one } from './one.js';
import { remove } from './remove.js';
import { sendInvitation } from './sendInvitation.js';
import { update } from './update.js';

export const user = defineRouter('user', {
  all,
  get,
  haveRootAccess,
  getBackups,
  getServerMetrics,
  getMetricsToken,
  getInvitations,
  one,
  update,
  getUserByToken,
  remove,
  assignPermissions,
  getContainerMetrics,
  generateToken,
  deleteApiKey,
  createApiKey,
  apiKeys,
  checkUserOrganizations,
  sendInvitation,
});
