import { outboundUrlProblem } from '@skiff/domain';
import { Invalid } from '../../errors.js';

/**
 * Refuses a URL the platform will send requests to (webhooks, push servers, S3 endpoints)
 * by the shared outbound-URL rules (link-local and cloud-metadata addresses, credentials in
 * the URL), naming the field. Whoever sends the requests checks again after resolving the name.
 */
export function refuseMetadataTarget(field: string, url: string | undefined): void {
  if (url === undefined) return;
  const problem = outboundUrlProblem(url);
  if (problem) throw Invalid(field, problem);
}
