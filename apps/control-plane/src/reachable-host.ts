/**
 * The host to print in an address a client can open: a server listening on every address
 * (`0.0.0.0`, `::`) is reached on the loopback; an IPv6 literal goes in brackets.
 */
export function reachableHost(listenHost: string): string {
  if (listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '') return '127.0.0.1';
  return listenHost.includes(':') && !listenHost.startsWith('[') ? `[${listenHost}]` : listenHost;
}
