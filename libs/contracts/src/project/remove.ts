import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DeleteVolumes, KeptAfterRemoval, ProjectRecord, RemovalSummary } from '../records.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a project with its environments and services',
  description:
    'Every deployed service is removed from its server as its own delete removes it (containers, ' +
    "networks, a compose stack's directory, an application's built images), and the uploaded " +
    "archives of its applications from the control plane's disk. Volumes (caches' data, compose " +
    "stacks' named volumes and bind-mounted `files/`) are kept unless `deleteVolumes` is true " +
    '(optional); `kept` lists what stays, and why.',
  input: z.object({ projectId: RequiredId, deleteVolumes: DeleteVolumes }),
  output: z.object({ project: ProjectRecord, removed: RemovalSummary, kept: KeptAfterRemoval }),
  access: { grant: 'canDeleteProjects' },
  example: { projectId: 'prj_example' },
});
