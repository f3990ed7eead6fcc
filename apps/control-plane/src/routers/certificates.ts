import type { RouterHandlers } from '../http/context.js';
import type { CertificateService } from '../services/domains/index.js';

export const certificatesHandlers = (certificates: CertificateService): RouterHandlers<'certificates'> => ({
  create: (input, { principal }) => certificates.create(principal, input),
  one: (input, { principal }) => certificates.one(principal, input.certificateId),
  remove: (input, { principal }) => certificates.remove(principal, input.certificateId),
  all: (_input, { principal }) => certificates.all(principal),
});
