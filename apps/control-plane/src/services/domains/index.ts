// Domains, basic-auth entries, certificates, and the reverse proxy (configuration, settings, requests to agents).
// What routers and the composition root use; services import each other's files directly.
export { CertificateService } from './certificates.js';
export { DomainService } from './domains.js';
export { defaultPlatformUpstream, ProxyConfig } from './proxy-config.js';
export { PROXY_REQUEST_TIMEOUT_MS, ProxyRequests } from './proxy-requests.js';
export { ProxySettingsService } from './proxy-settings.js';
export { SecurityService } from './security.js';
