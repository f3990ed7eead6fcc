import { defineRouter } from '../contract.js';
import { create } from './create.js';
import { manualBackup } from './manualBackup.js';
import { one } from './one.js';
import { oneRestore } from './oneRestore.js';
import { remove } from './remove.js';
import { restore } from './restore.js';

export const volumeBackup = defineRouter('volumeBackup', {
  create,
  one,
  remove,
  manualBackup,
  restore,
  oneRestore,
});
