import { defineRouter } from '../contract.js';
import { list } from './list.js';

export const audit = defineRouter('audit', { list });
