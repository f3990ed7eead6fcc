import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { create } from './create.js';
import { one } from './one.js';
import { remove } from './remove.js';
import { testConnection } from './testConnection.js';
import { update } from './update.js';

/** S3-compatible backup destinations, referenced by backups' `destinationId`. */
export const destination = defineRouter('destination', {
  create,
  one,
  all,
  update,
  remove,
  testConnection,
});
