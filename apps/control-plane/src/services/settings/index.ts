// Platform settings, AI providers, billing.
// What routers and the composition root use; services import each other's files directly.
export { AiService } from './ai.js';
export { BillingService } from './billing.js';
export { PlatformSettingsService } from './platform-settings.js';
