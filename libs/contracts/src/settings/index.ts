import { defineRouter } from '../contract.js';
import { assignDomainServer } from './assignDomainServer.js';
import { cleanAll } from './cleanAll.js';
import { cleanContainerBuilder } from './cleanContainerBuilder.js';
import { cleanContainerPrune } from './cleanContainerPrune.js';
import { cleanMonitoring } from './cleanMonitoring.js';
import { cleanSSHPrivateKey } from './cleanSSHPrivateKey.js';
import { cleanStoppedContainers } from './cleanStoppedContainers.js';
import { cleanUnusedImages } from './cleanUnusedImages.js';
import { cleanUnusedVolumes } from './cleanUnusedVolumes.js';
import { get } from './get.js';
import { getIp } from './getIp.js';
import { getOpenApiDocument } from './getOpenApiDocument.js';
import { getPlatformVersion } from './getPlatformVersion.js';
import { getReleaseTag } from './getReleaseTag.js';
import { getUpdateData } from './getUpdateData.js';
import { readDirectories } from './readDirectories.js';
import { readMiddlewareProxyConfig } from './readMiddlewareProxyConfig.js';
import { readProxyConfig } from './readProxyConfig.js';
import { readProxyEnv } from './readProxyEnv.js';
import { readProxyFile } from './readProxyFile.js';
import { readWebServerProxyConfig } from './readWebServerProxyConfig.js';
import { reloadProxy } from './reloadProxy.js';
import { reloadServer } from './reloadServer.js';
import { saveSSHPrivateKey } from './saveSSHPrivateKey.js';
import { toggleDashboard } from './toggleDashboard.js';
import { trustOrganization } from './trustOrganization.js';
import { updateContainerCleanup } from './updateContainerCleanup.js';
import { updateMetricsThresholds } from './updateMetricsThresholds.js';
import { updateMiddlewareProxyConfig } from './updateMiddlewareProxyConfig.js';
import { updateProxyConfig } from './updateProxyConfig.js';
import { updateProxyFile } from './updateProxyFile.js';
import { updateServer } from './updateServer.js';
import { updateWebServerProxyConfig } from './updateWebServerProxyConfig.js';

export const settings = defineRouter('settings', {
  reloadServer,
  reloadProxy,
  toggleDashboard,
  trustOrganization,
  updateMetricsThresholds,
  cleanUnusedImages,
  cleanUnusedVolumes,
  cleanStoppedContainers,
  cleanContainerBuilder,
  cleanContainerPrune,
  cleanAll,
  cleanMonitoring,
  saveSSHPrivateKey,
  cleanSSHPrivateKey,
  assignDomainServer,
  updateContainerCleanup,
  readProxyConfig,
  readWebServerProxyConfig,
  readMiddlewareProxyConfig,
  updateProxyConfig,
  updateWebServerProxyConfig,
  updateMiddlewareProxyConfig,
  getUpdateData,
  updateServer,
  getPlatformVersion,
  getReleaseTag,
  readDirectories,
  updateProxyFile,
  readProxyFile,
  getIp,
  getOpenApiDocument,
  readProxyEnv,
  get,
});
