export { ALLOW_PRIVATE_ENV, addressProblem, type OutboundPolicy, PUBLIC_ONLY, readOutboundPolicy } from './address-policy.js';
export { normalHost, OutboundRefused, type PinnedHost, type Resolver, resolvePinned, resolveUrl, systemResolver } from './resolve.js';
export { type OutboundAnswer, OutboundFetchError, outboundFetch, type OutboundRequest } from './fetch.js';
export { type GitPin, pinGitRemote } from './git.js';
