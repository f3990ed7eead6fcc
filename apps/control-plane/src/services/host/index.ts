// Operations on whole hosts: cleanups and their daily schedule, platform restart and updates.
export { assertHostAuthority } from './host-authority.js';
export { CLEANUPS, CLEANUP_REQUEST_TIMEOUT_MS, type CleanupKind, type CleanupResult, HostCleanupService, type HostCleanupOptions } from './host-cleanup.js';
export { CLEANUP_PERIOD_MS, CleanupSchedules } from './cleanup-schedules.js';
export { CONTROL_PLANE_UPDATE, PlatformUpdates, type PlatformUpdatesOptions } from './platform-updates.js';
export { DEFAULT_RELEASE_FEED_URL, compareVersions, newestRelease } from './release-feed.js';
