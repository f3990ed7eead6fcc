import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { create } from './create.js';
import { duplicate } from './duplicate.js';
import { one } from './one.js';
import { remove } from './remove.js';
import { update } from './update.js';

export const project = defineRouter('project', { create, one, all, remove, update, duplicate });
