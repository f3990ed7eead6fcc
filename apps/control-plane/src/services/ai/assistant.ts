import { appNameFrom } from '@skiff/domain';
import type { Logger } from 'pino';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import type { ComposeTemplateService } from '../compose/compose-templates.js';
import { mayUseHostPrivileges } from '../compose/host-privileges.js';
import type { ProjectService } from '../projects/projects.js';
import type { AiService } from '../settings/ai.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { ServiceAccess } from '../shared/service-access.js';
import { refuseMetadataTarget } from '../shared/target-url.js';
import { AiProviderError, type OpenAiClient } from './openai-client.js';
import { type Deployable, SUGGESTIONS_SCHEMA, deployableProblem, processedOf, suggestionsOf, systemPrompt } from './suggestions.js';

/** Longest request text sent to a model. */
const MAX_INPUT_CHARS = 8000;

/**
 * `ai.getModels`, `ai.suggest` and `ai.deploy`: the calls to an organization's
 * OpenAI-compatible endpoint (openai-client.ts), and a checked suggestion turned into a
 * compose stack through the template path (ComposeTemplateService.createStack).
 */
export class AiAssistant {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly projects: ProjectService,
    private readonly configs: AiService,
    private readonly templates: ComposeTemplateService,
    private readonly client: OpenAiClient,
    private readonly log: Logger,
  ) {}

  async getModels(_p: Principal, input: { apiUrl: string; apiKey: string }) {
    refuseMetadataTarget('apiUrl', input.apiUrl);
    try {
      return await this.client.models({ apiUrl: input.apiUrl, apiKey: input.apiKey });
    } catch (error) {
      if (error instanceof AiProviderError) throw Invalid(error.about === 'apiKey' ? 'apiKey' : 'apiUrl', error.message);
      throw error;
    }
  }

  async suggest(p: Principal, input: { aiId: string; input: string; serverId?: string }) {
    const config = await this.configs.endpoint(p, input.aiId);
    const request = input.input.trim();
    if (request === '') throw Invalid('input', 'must say what to run');
    if (request.length > MAX_INPUT_CHARS) throw Invalid('input', `must be at most ${MAX_INPUT_CHARS} characters`);
    if (!config.isEnabled) throw Invalid('aiId', 'this AI configuration is disabled');
    const serverId = input.serverId || null;
    await this.access.checkServer(p, serverId);
    const allowHostPrivileges = await mayUseHostPrivileges(this.deps.db, p.organizationId, serverId);
    // Stored before the outbound checks tightened, or the rules changed since.
    refuseMetadataTarget('aiId', config.apiUrl);

    let answer: unknown;
    try {
      answer = await this.client.chatJson(config, {
        model: config.model,
        messages: [
          { role: 'system', content: systemPrompt() },
          { role: 'user', content: request },
        ],
        schemaName: 'deployment_suggestions',
        schema: SUGGESTIONS_SCHEMA,
      });
    } catch (error) {
      if (error instanceof AiProviderError) throw Invalid('aiId', error.message);
      throw error;
    }
    const { kept, dropped } = suggestionsOf(answer, (d) => deployableProblem(d, { appName: 'suggestion', allowHostPrivileges }));
    if (dropped.length > 0) this.log.info({ aiId: input.aiId, kept: kept.length, dropped: dropped.slice(0, 10) }, 'AI suggestions dropped');
    if (kept.length === 0) {
      throw Invalid('input', `the model answered no deployable suggestion${dropped.length ? ` (${dropped.slice(0, 3).join('; ')})` : ''}; try again or say more`);
    }
    return kept;
  }

  async deploy(p: Principal, input: Deployable & { environmentId: string; id: string; name: string; description: string; serverId?: string }) {
    await this.projects.findEnvironment(p, input.environmentId);
    const serverId = input.serverId || null;
    await this.access.checkServer(p, serverId);
    const appName = appNameFrom(input.name);
    const allowHostPrivileges = await mayUseHostPrivileges(this.deps.db, p.organizationId, serverId);
    const problem = deployableProblem(input, { appName, allowHostPrivileges });
    if (problem) throw Invalid(problem.field, problem.message);
    return this.templates.createStack(
      p,
      { environmentId: input.environmentId, serverId, name: input.name, appName, description: input.description },
      processedOf(input),
      { field: 'containerCompose', domainsAt: 'domains', domainsField: 'domains' },
    );
  }
}
