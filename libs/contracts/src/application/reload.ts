import { z } from 'zod';
import { defineContract } from '../contract.js';
import { AppName, Empty, Id } from '../primitives.js';

export const reload = defineContract({
  method: 'POST',
  summary: 'Restart the running application without rebuilding it',
  input: z.object({ appName: AppName, applicationId: Id }),
  output: Empty,
  example: { appName: 'shop-frontend', applicationId: 'app_example' },
});
