import { defineRouter } from '../contract.js';
import { cancelDeployment } from './cancelDeployment.js';
import { cleanQueues } from './cleanQueues.js';
import { create } from './create.js';
import { delete_ } from './delete.js';
import { deploy } from './deploy.js';
import { disconnectGitProvider } from './disconnectGitProvider.js';
import { dropDeployment } from './dropDeployment.js';
import { killBuild } from './killBuild.js';
import { markRunning } from './markRunning.js';
import { one } from './one.js';
import { redeploy } from './redeploy.js';
import { reload } from './reload.js';
import { saveBuildType } from './saveBuildType.js';
import { saveContainerProvider } from './saveContainerProvider.js';
import { saveEnvironment } from './saveEnvironment.js';
import { saveForgeAProvider } from './saveForgeAProvider.js';
import { saveForgeBProvider } from './saveForgeBProvider.js';
import { saveForgeCProvider } from './saveForgeCProvider.js';
import { saveForgeDProvider } from './saveForgeDProvider.js';
import { saveGitProvider } from './saveGitProvider.js';
import { start } from './start.js';
import { stop } from './stop.js';
import { update } from './update.js';
import { refreshToken } from './refreshToken.js';
import { webhookDeliveries } from './webhookDeliveries.js';

export const application = defineRouter('application', {
  create,
  one,
  reload,
  delete: delete_,
  stop,
  start,
  redeploy,
  saveEnvironment,
  saveBuildType,
  saveForgeAProvider,
  saveForgeBProvider,
  saveForgeCProvider,
  saveForgeDProvider,
  saveContainerProvider,
  saveGitProvider,
  disconnectGitProvider,
  markRunning,
  update,
  deploy,
  cancelDeployment,
  killBuild,
  cleanQueues,
  dropDeployment,
  refreshToken,
  webhookDeliveries,
});
