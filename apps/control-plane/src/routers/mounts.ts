import type { RouterHandlers } from '../http/context.js';
import type { MountService } from '../services/mounts/index.js';

export const mountsHandlers = (mounts: MountService): RouterHandlers<'mounts'> => ({
  create: (input, { principal }) => mounts.create(principal, input),
  update: (input, { principal }) => mounts.update(principal, input),
  remove: (input, { principal }) => mounts.remove(principal, input.mountId),
  all: (input, { principal }) => mounts.all(principal, input.applicationId),
});
