/**
 * Fixed test data for the Caddy config tests: a self-signed certificate (EC P-256, valid
 * until 2126) for secure.example.com and *.example.org, and bcrypt hashes (cost 4) of
 * alice:wonderland and bob:builder. Test-only; nothing here is a real secret.
 */
import type { ProxyCertificate } from './caddy-input.js';

export const TEST_CERTIFICATE: ProxyCertificate = {
  id: 'crt_1',
  certificateChain: `-----BEGIN CERTIFICATE-----
MIIBwDCCAWagAwIBAgIUTghaAlKU/7ta6liq3OeSrndj5yswCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSc2VjdXJlLmV4YW1wbGUuY29tMCAXDTI2MTEyMzAxNTQyMVoY
DzIxMjYxMDMwMDE1NDIxWjAdMRswGQYDVQQDDBJzZWN1cmUuZXhhbXBsZS5jb20w
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQRvXFnsyOmcqT0lRqHurRWA901nupd
A9sErNK/GwdBupQ98RaYzSAryWHIt7pcQYyhPpnXedQ5wNn71DUd3bkgo4GBMH8w
HQYDVR0OBBYEFJ1+TOoXG7FOtAUKF+4DBYXguVUzMB8GA1UdIwQYMBaAFJ1+TOoX
G7FOtAUKF+4DBYXguVUzMA8GA1UdEwEB/wQFMAMBAf8wLAYDVR0RBCUwI4ISc2Vj
dXJlLmV4YW1wbGUuY29tgg0qLmV4YW1wbGUub3JnMAoGCCqGSM49BAMCA0gAMEUC
IChO9Dta5O62BeoNwL260dSc0Q+ojubHiWJvU0x+fWk2AiEAgF6LH9d0MeyHm6TS
5TkCqe8YCQGSnlsiFZR51Cz8+cI=
-----END CERTIFICATE-----
`,
  privateKey: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgGabQpTy5LgKvYXFR
qwtvAGsRFgushvmJZ/1K+gXpGNahRANCAAQRvXFnsyOmcqT0lRqHurRWA901nupd
A9sErNK/GwdBupQ98RaYzSAryWHIt7pcQYyhPpnXedQ5wNn71DUd3bkg
-----END PRIVATE KEY-----
`,
  subjectNames: ['secure.example.com', '*.example.org'],
};

export const ALICE = { username: 'alice', password: 'wonderland', passwordHash: '$2y$04$FRIHMhY4cmFD3o9XuBYMZuPy8mv2fW.HHQ/pvwXI1293GAFOQy9HG' };
export const BOB = { username: 'bob', password: 'builder', passwordHash: '$2y$04$v43TuFTKC7k1uSKCWj8rG.NnbMT20FTfJurUQfShXO6k3jNAsFk1y' };
