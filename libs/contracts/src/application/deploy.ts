import { z } from 'zod';
import { defineContract } from '../contract.js';
import { DeploymentRecord } from '../deployment/record.js';
import { RequiredId } from '../primitives.js';

export const deploy = defineContract({
  method: 'POST',
  summary: 'Queue a build and deployment of the application',
  description:
    'The first deployment of an application (redeploy repeats one). The job ' +
    "joins the application's FIFO queue; `title` and `description` label the deployment record. " +
    'Answers the new deployment, `queued` until the server\'s agent takes it. The environment is ' +
    'resolved now (`${{project.NAME}}`, `${{environment.NAME}}`, `${{NAME}}`): an undefined ' +
    'reference is BAD_REQUEST naming `env`, and nothing is queued. Sources: a registry image ' +
    '(`container`), a git repository (`git`), an uploaded archive (`drop`), or a forge repository ' +
    '(`forgeA`..`forgeD`: cloned from the address the forge gives, at the saved branch or tag, with ' +
    'a login minted for this deploy and given to git through its environment only); a missing ' +
    'setting is BAD_REQUEST naming it.',
  input: z.object({
    applicationId: RequiredId,
    title: z.string().optional(),
    description: z.string().optional(),
  }),
  output: DeploymentRecord,
  example: { applicationId: 'app_example', title: 'First deployment' },
  extension: true,
});
