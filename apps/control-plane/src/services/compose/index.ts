// Compose stacks: records, files, deploys, and the template catalogs.
// What routers and the composition root use; services import each other's files directly.
export { ComposeService } from './compose.js';
export { ComposeDeployments } from './compose-deploy.js';
export { ComposeFiles } from './compose-files.js';
export { ComposeTemplateService } from './compose-templates.js';
export { bundledCatalogDir, loadBundledCatalog } from './compose-templates-catalog.js';
export { type RemoteCatalogLimits } from './compose-templates-remote.js';
