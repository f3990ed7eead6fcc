/** A template that cannot be read or processed, with the reason. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}
