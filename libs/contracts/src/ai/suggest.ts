import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const suggest = defineContract({
  method: 'POST',
  summary: 'Ask the configured model for compose-based templates matching a request',
  description:
    'Sends `input` (what the user wants to run) to the chat endpoint of the AI configuration ' +
    'and answers a few suggestions, each a compose file with its environment variables, ' +
    'domains and config files, ready for `ai.deploy`. `serverId` picks the server the ' +
    'suggestion is meant for (default: the platform host).',
  input: z.object({ aiId: Id, input: z.string(), serverId: Id.optional() }),
  output: z.array(Unspecified),
  example: { aiId: 'ai_example', input: 'A self-hosted analytics tool with a Postgres database' },
});
