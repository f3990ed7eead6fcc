// The AI assistant: an OpenAI-compatible endpoint's models and suggestions, and their deploys.
// What routers and the composition root use; services import each other's files directly.
export { AiAssistant } from './assistant.js';
export { DEFAULT_AI_LIMITS, OpenAiClient, type OpenAiClientOptions } from './openai-client.js';
