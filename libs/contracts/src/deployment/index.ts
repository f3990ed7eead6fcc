import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { allByCompose } from './allByCompose.js';
import { readLogs } from './readLogs.js';
import { rollback } from './rollback.js';

export const deployment = defineRouter('deployment', {
  all,
  allByCompose,
  readLogs,
  rollback,
});
