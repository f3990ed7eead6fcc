/** A proxy request refused because of one of its fields (proto ProxyReply.refused_field). */
export type RefusedField = 'path' | 'content' | 'enable_dashboard';

export class ProxyRequestRefused extends Error {
  override readonly name = 'ProxyRequestRefused';

  constructor(
    readonly field: RefusedField,
    message: string,
  ) {
    super(message);
  }
}
