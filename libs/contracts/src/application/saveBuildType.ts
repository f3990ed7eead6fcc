import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { BuildType, Id } from '../primitives.js';

export const saveBuildType = defineContract({
  method: 'POST',
  summary: 'Choose how the application is built',
  input: z.object({
    applicationId: Id,
    buildType: BuildType,
    containerfile: z.string().nullable(),
    containerContextPath: z.string().nullable(),
    containerBuildStage: z.string().nullable(),
    legacyVersion: z.string().nullable(),
    packTwoVersion: z.string().nullable(),
    publishDirectory: z.string().nullable().optional(),
    isStaticSpa: z.boolean().nullable().optional(),
  }),
  output: ApplicationRecord,
  example: {
    applicationId: 'app_example',
    buildType: 'containerfile',
    containerfile: 'Dockerfile',
    containerContextPath: '.',
    containerBuildStage: null,
    legacyVersion: null,
    packTwoVersion: null,
  },
});
