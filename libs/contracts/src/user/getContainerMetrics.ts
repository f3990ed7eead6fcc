import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const getContainerMetrics = defineContract({
  method: 'GET',
  summary: 'Recent metrics of the containers of one workload',
  input: z.object({
    url: z.string().optional(),
    token: z.string().optional(),
    appName: z.string().optional(),
    dataPoints: z.string().optional(),
  }),
  output: Unspecified,
  example: { appName: 'shop-web', dataPoints: '50' },
});
