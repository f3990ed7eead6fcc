/** The events a notification channel subscribes to (its flags). */
export const FLAGS = [
  'appBuildError',
  'databaseBackup',
  'platformBackup',
  'volumeBackup',
  'platformRestart',
  'appDeploy',
  'containerCleanup',
  'serverThreshold',
] as const;
