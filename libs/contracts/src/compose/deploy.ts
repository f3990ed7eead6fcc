import { z } from 'zod';
import { defineContract } from '../contract.js';
import { DeploymentRecord } from '../deployment/record.js';
import { RequiredId } from '../primitives.js';

export const deploy = defineContract({
  method: 'POST',
  summary: 'Queue a deployment of the stack',
  description:
    "The job joins the stack's FIFO queue on its server; the answer is the new deployment, `queued` " +
    "until the server's agent takes it (its progress and log: `deployment.allByCompose`, " +
    '`deployment.readLogs`). The agent takes the compose file (the stored text of a `raw` stack, or a ' +
    'shallow clone of `customGitUrl` at `customGitBranch`, with its SSH key, reading `composePath`), ' +
    "converts it as `getConvertedCompose` shows, writes the `.env` file (the stack's `env` over its " +
    "environment's and project's, `${{…}}` resolved) beside it and runs `docker compose` " +
    '(`container-compose`, project name = appName) or `docker stack deploy` (`stack`) with the ' +
    'default command (`getDefaultCommand`) or the custom `command`. The services that domains route ' +
    'to join the platform network at each deploy: redeploy after adding a domain to a new service. ' +
    '`applicationStatus` is `running` while it runs, then `done` or `error`. Refused (BAD_REQUEST ' +
    'naming the field, nothing queued): an empty or invalid raw `composeFile`, a missing ' +
    '`customGitUrl`/`customGitBranch`, a forge source without its connection, repository or branch ' +
    '(a forge `sourceType` is cloned from the address the forge gives, with a login minted for the ' +
    'deploy and given to git through its environment only; a forge refusing it is BAD_REQUEST naming ' +
    'the connection field), an ' +
    'undefined `${{…}}` reference (`env`), `randomize` without a `suffix`, a `command` that is not a ' +
    'compose command, a stack being deleted.',
  input: z.object({ composeId: RequiredId, title: z.string().optional(), description: z.string().optional() }),
  output: DeploymentRecord,
  example: { composeId: 'cmp_example' },
});
