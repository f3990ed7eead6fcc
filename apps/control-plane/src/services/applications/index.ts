// Applications and their preview deployments.
// What routers and the composition root use; services import each other's files directly.
export { ApplicationService } from './applications.js';
export { PreviewService } from './previews.js';
