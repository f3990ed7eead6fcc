// Platform settings, AI providers, billing.
// What routers and the composition root use; services import each other's files directly.
export { AiService } from './ai.js';
export { BillingAllowances, BillingService } from './billing.js';
export { PlatformSettingsService } from './platform-settings.js';
