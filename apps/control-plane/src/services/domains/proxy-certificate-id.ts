/**
 * A stored certificate's name in a proxy configuration: ids are unique within an organization
 * only, and one proxy serves several.
 */
export const proxyCertificateId = (c: { organizationId: string; id: string }) => `${c.organizationId}/${c.id}`;
