import { z } from 'zod';
import { defineContract } from '../contract.js';

export const getUpdateData = defineContract({
  method: 'POST',
  summary: 'Check whether a newer platform version is available',
  description:
    'Reads the release feed (SKIFF_RELEASE_FEED_URL, a JSON document `{"latest": {"version", ' +
    '"url"?, "notes"?}}` or `{"releases": [{"version", …}]}`) through the outbound policy and ' +
    'compares its newest version with the running one. An unreachable feed, or one that is not ' +
    'such a document, answers BAD_REQUEST saying so. Platform administrators only.',
  input: z.object({}),
  output: z.object({
    currentVersion: z.string().describe('The version this control plane runs'),
    latestVersion: z.string().describe('The newest version the feed lists'),
    updateAvailable: z.boolean().describe('The feed lists a version newer than the running one'),
    releaseUrl: z.string().nullable().describe('Where the newest release is described, when the feed says'),
    notes: z.string().nullable().describe("The newest release's notes, when the feed has them"),
    feedUrl: z.string().describe('The feed read'),
  }),
  access: { role: 'admin' },
  example: {},
});
