import { defineRouter } from '../contract.js';
import { changeStatus } from './changeStatus.js';
import { create } from './create.js';
import { deploy } from './deploy.js';
import { move } from './move.js';
import { one } from './one.js';
import { rebuild } from './rebuild.js';
import { reload } from './reload.js';
import { remove } from './remove.js';
import { saveEnvironment } from './saveEnvironment.js';
import { saveExternalPort } from './saveExternalPort.js';
import { start } from './start.js';
import { stop } from './stop.js';
import { update } from './update.js';

export const cache = defineRouter('cache', {
  create,
  one,
  start,
  stop,
  remove,
  reload,
  saveExternalPort,
  deploy,
  rebuild,
  changeStatus,
  saveEnvironment,
  update,
  move,
});
