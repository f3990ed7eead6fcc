import { z } from 'zod';

/** The compose file as a stack deploys it (`getConvertedCompose`, and what `randomizeCompose` / `isolatedDeployment` turn on). */
export const ConvertedCompose = z.object({
  composeFile: z.string().describe('the compose YAML exactly as the agent runs it'),
  suffix: z.string().nullable().describe('the randomize suffix applied; null when randomize is off'),
  isolatedNetwork: z.string().nullable().describe("the stack's own network (its appName) when isolatedDeployment is on; null otherwise"),
  routedServices: z
    .array(z.string())
    .describe("the services the stack's domains route to: they join the platform network with the alias `<service>.<appName>`"),
});

/** One mount of a service, as the deployed compose file declares it. */
export const ComposeMount = z.object({
  type: z.enum(['volume', 'bind', 'tmpfs', 'npipe', 'image', 'cluster']).describe('`volume` for named and anonymous volumes'),
  source: z.string().nullable().describe('the named volume or host path as written in the file; null for anonymous volumes and tmpfs'),
  volumeName: z
    .string()
    .nullable()
    .describe('for a named volume: the Docker volume it is (`<appName>_<volume>` unless it is external or has its own `name`); null otherwise'),
  target: z.string().describe('the path inside the container'),
  readOnly: z.boolean(),
});

/** The compose program's arguments a deploy runs. */
export const ComposeCommand = z.object({
  command: z.string().describe('the arguments after the compose program, as one line'),
  argv: z.array(z.string()).describe('the same arguments, one per item'),
  custom: z.boolean().describe("whether they are the stack's own `command` (false: the default of its composeType)"),
});
