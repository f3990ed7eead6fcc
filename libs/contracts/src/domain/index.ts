import { defineRouter } from '../contract.js';
import { byApplicationId } from './byApplicationId.js';
import { byComposeId } from './byComposeId.js';
import { canGenerateProxyMeDomains } from './canGenerateProxyMeDomains.js';
import { create } from './create.js';
import { delete_ } from './delete.js';
import { generateDomain } from './generateDomain.js';
import { one } from './one.js';
import { update } from './update.js';
import { validateDomain } from './validateDomain.js';

export const domain = defineRouter('domain', {
  create,
  byApplicationId,
  byComposeId,
  generateDomain,
  canGenerateProxyMeDomains,
  update,
  one,
  delete: delete_,
  validateDomain,
});
