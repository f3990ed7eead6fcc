import { defineRouter } from '../contract.js';
import { cancelDeployment } from './cancelDeployment.js';
import { cleanQueues } from './cleanQueues.js';
import { create } from './create.js';
import { delete_ } from './delete.js';
import { deploy } from './deploy.js';
import { deployTemplate } from './deployTemplate.js';
import { disconnectGitProvider } from './disconnectGitProvider.js';
import { fetchSourceType } from './fetchSourceType.js';
import { getConvertedCompose } from './getConvertedCompose.js';
import { getDefaultCommand } from './getDefaultCommand.js';
import { getTags } from './getTags.js';
import { import_ } from './import.js';
import { isolatedDeployment } from './isolatedDeployment.js';
import { killBuild } from './killBuild.js';
import { loadMountsByService } from './loadMountsByService.js';
import { loadServices } from './loadServices.js';
import { move } from './move.js';
import { one } from './one.js';
import { processTemplate } from './processTemplate.js';
import { randomizeCompose } from './randomizeCompose.js';
import { redeploy } from './redeploy.js';
import { refreshToken } from './refreshToken.js';
import { webhookDeliveries } from './webhookDeliveries.js';
import { start } from './start.js';
import { stop } from './stop.js';
import { templates } from './templates.js';
import { update } from './update.js';

export const compose = defineRouter('compose', {
  create,
  one,
  update,
  delete: delete_,
  cleanQueues,
  killBuild,
  fetchSourceType,
  randomizeCompose,
  isolatedDeployment,
  deploy,
  redeploy,
  stop,
  start,
  refreshToken,
  disconnectGitProvider,
  cancelDeployment,
  loadServices,
  loadMountsByService,
  getConvertedCompose,
  getDefaultCommand,
  deployTemplate,
  templates,
  getTags,
  move,
  processTemplate,
  import: import_,
  webhookDeliveries,
});
