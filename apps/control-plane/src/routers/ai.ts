import type { RouterHandlers } from '../http/context.js';
import type { AiAssistant } from '../services/ai/index.js';
import type { AiService } from '../services/settings/index.js';

export const aiHandlers = (ai: AiService, assistant: AiAssistant): RouterHandlers<'ai'> => ({
  create: (input, { principal }) => ai.create(principal, input),
  one: (input, { principal }) => ai.one(principal, input.aiId),
  get: (input, { principal }) => ai.one(principal, input.aiId),
  getAll: (_input, { principal }) => ai.all(principal),
  update: (input, { principal }) => ai.update(principal, input),
  delete: (input, { principal }) => ai.delete(principal, input.aiId),
  getModels: (input, { principal }) => assistant.getModels(principal, input),
  suggest: (input, { principal }) => assistant.suggest(principal, input),
  deploy: (input, { principal }) => assistant.deploy(principal, input),
});
