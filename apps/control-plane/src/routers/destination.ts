import type { RouterHandlers } from '../http/context.js';
import type { BackupRunner, DestinationService } from '../services/backups/index.js';

export const destinationHandlers = (destinations: DestinationService, runner: BackupRunner): RouterHandlers<'destination'> => ({
  create: (input, { principal }) => destinations.create(principal, input),
  one: (input, { principal }) => destinations.one(principal, input.destinationId),
  all: (_input, { principal }) => destinations.all(principal),
  update: (input, { principal }) => destinations.update(principal, input),
  remove: (input, { principal }) => destinations.remove(principal, input.destinationId),
  testConnection: (input) => runner.testConnection(input),
});
