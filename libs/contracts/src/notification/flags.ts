import { z } from 'zod';

/** Event subscriptions and display name of a notification channel, required on create. */
export const Flags = z.object({
  appBuildError: z.boolean(),
  databaseBackup: z.boolean(),
  platformBackup: z.boolean(),
  volumeBackup: z.boolean(),
  platformRestart: z.boolean(),
  appDeploy: z.boolean(),
  containerCleanup: z.boolean(),
  serverThreshold: z.boolean(),
  name: z.string(),
});

/** The same flags, each optional, for update operations. */
export const FlagsPatch = Flags.partial();

export const flagsExample = {
  appBuildError: true,
  databaseBackup: true,
  platformBackup: false,
  volumeBackup: false,
  platformRestart: true,
  appDeploy: true,
  containerCleanup: false,
  serverThreshold: true,
};
