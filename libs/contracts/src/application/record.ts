import { z } from 'zod';
import { BuildType, Timestamp } from '../primitives.js';
import { ApplicationSettings } from './settings.js';

const text = z.string().nullable();

/**
 * An application as responses show it: every setting of `application.update`, the source
 * connection ids and the build settings. Write-only secrets (`password`, `buildSecrets`,
 * `previewBuildSecrets`) are never returned; `has<Field>` says whether one is set.
 */
export const ApplicationRecord = ApplicationSettings
  .omit({ applicationId: true, password: true, buildSecrets: true, previewBuildSecrets: true })
  .required()
  .extend({
    applicationId: z.string(),
    environmentId: z.string(),
    serverId: text,
    env: z.string().describe('dotenv text; `${{project.X}}`, `${{environment.X}}`, `${{X}}` are resolved at deploy time'),
    buildType: BuildType.nullable(),
    legacyVersion: text,
    packTwoVersion: text,
    publishDirectory: text,
    isStaticSpa: z.boolean().nullable(),
    createEnvFile: z.boolean().nullable(),
    forgeAId: text,
    forgeBId: text,
    forgeCId: text,
    forgeDId: text,
    hasPassword: z.boolean().describe('a registry password is set'),
    hasBuildSecrets: z.boolean().describe('build secrets are set'),
    hasPreviewBuildSecrets: z.boolean().describe('preview build secrets are set'),
    createdAt: Timestamp,
  });
