// Users, organizations and their invitations, API keys, permissions, metrics tokens.
// What routers and the composition root use; services import each other's files directly.
export { IdentityService } from './identity.js';
export { MetricsTokenService } from './metrics-tokens.js';
export { OrganizationService } from './organizations.js';
export { ApiKeyService, KeyUsage } from './api-keys.js';
export { InvitationMailer, PLATFORM_SMTP, type PlatformSmtp } from './invitation-mail.js';
export { AccessChanges, ACCESS_CHANNEL, accessSignals, type AccessCache } from './access-changes.js';
