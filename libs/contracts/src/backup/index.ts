import { defineRouter } from '../contract.js';
import { create } from './create.js';
import { listBackupFiles } from './listBackupFiles.js';
import { manualBackupCompose } from './manualBackupCompose.js';
import { manualBackupDbA } from './manualBackupDbA.js';
import { manualBackupDbB } from './manualBackupDbB.js';
import { manualBackupDbC } from './manualBackupDbC.js';
import { manualBackupDbD } from './manualBackupDbD.js';
import { manualBackupDbE } from './manualBackupDbE.js';
import { manualBackupWebServer } from './manualBackupWebServer.js';
import { one } from './one.js';
import { oneRestore } from './oneRestore.js';
import { remove } from './remove.js';
import { restore } from './restore.js';
import { update } from './update.js';
import { verifications } from './verifications.js';
import { verify } from './verify.js';
import { oneVerification } from './oneVerification.js';

export const backup = defineRouter('backup', {
  create,
  one,
  update,
  remove,
  manualBackupDbA,
  manualBackupDbC,
  manualBackupDbB,
  manualBackupCompose,
  manualBackupDbD,
  manualBackupWebServer,
  manualBackupDbE,
  listBackupFiles,
  restore,
  oneRestore,
  verify,
  oneVerification,
  verifications,
});
