/** A connection URL (the API never puts a password in one) with `password` put in after its user. */
export const withPassword = (url: string, password: string) =>
  url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^@/:]+)@/i, (_, head: string) => `${head}:${encodeURIComponent(password)}@`);
