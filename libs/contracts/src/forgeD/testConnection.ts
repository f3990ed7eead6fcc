import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const testConnection = defineContract({
  method: 'POST',
  summary: 'Check that a forgeD (Gitea/Forgejo) connection can list repositories',
  description: 'Answers `{ok, repositories, message}`; refused credentials are BAD_REQUEST naming `forgeDId`, with the forge\'s reason and no secret.',
  input: z.object({ forgeDId: RequiredId }),
  output: Unspecified,
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { forgeDId: 'fgd_example' },
});
