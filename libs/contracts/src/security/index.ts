import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { create } from './create.js';
import { delete_ } from './delete.js';
import { one } from './one.js';
import { update } from './update.js';

export const security = defineRouter('security', { create, one, all, delete: delete_, update });
