import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const testConnection = defineContract({
  method: 'POST',
  summary: 'Check that a forgeA (GitHub App) connection can list repositories',
  description: 'Answers `{ok, repositories, message}`; refused credentials are BAD_REQUEST naming `forgeAId`, with the forge\'s reason and no secret.',
  input: z.object({ forgeAId: RequiredId }),
  output: Unspecified,
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { forgeAId: 'fga_example' },
});
