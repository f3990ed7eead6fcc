import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NotificationRecord } from './record.js';

export const all = defineContract({
  method: 'GET',
  summary: 'Every notification of the organization, with their channel records',
  description: 'Oldest first.',
  input: z.object({}),
  output: z.array(NotificationRecord),
  example: {},
});
