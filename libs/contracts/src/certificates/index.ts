import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { create } from './create.js';
import { one } from './one.js';
import { remove } from './remove.js';

export const certificates = defineRouter('certificates', { create, one, remove, all });
