import { z } from 'zod';
import { defineContract } from '../contract.js';

export const getOpenApiDocument = defineContract({
  method: 'GET',
  summary: 'The OpenAPI document of this API',
  input: z.object({}),
  output: z.looseObject({}).describe('The OpenAPI 3.1 document describing every operation'),
  example: {},
});
