import { describe, expect, it } from 'vitest';
import { refusedHostPort } from './host-ports.js';

const file = 'services:\n  web:\n    image: busybox\n    ports:\n      - "${PORT}:80"\n      - "8443:443"\n      - "8443:443/udp"\n      - "127.0.0.1:8443:8443"\n';
const forbiddenHostPorts = [
  { first: 8443, last: 8443, protocol: 'sctp', reason: '' },
  { first: 8999, last: 9001, protocol: 'tcp', reason: '' },
];

describe('refusedHostPort', () => {
  it('passes a file whose ports are free, counting each host port once (protocols apart), and one whose variable has no value', () => {
    expect(refusedHostPort(file, 'docker-compose.yml', { envFile: 'PORT=8080\n', forbiddenHostPorts, maxHostPorts: 3 })).toBeNull();
    expect(refusedHostPort(file, 'docker-compose.yml', { envFile: '', forbiddenHostPorts, maxHostPorts: 2 })).toBeNull();
    expect(refusedHostPort(file, 'docker-compose.yml', { envFile: 'PORT=8080\n', forbiddenHostPorts, maxHostPorts: 2 })).toBe(
      'docker-compose.yml: publishes 3 host ports, more than the 2 a stack may publish',
    );
  });

  it('names the file, the service and the port its variable resolves to; checks nothing for an older control plane', () => {
    expect(refusedHostPort(file, 'deploy/compose.yml', { envFile: 'PORT=9000\n', forbiddenHostPorts, maxHostPorts: 0 })).toBe(
      'deploy/compose.yml: service "web" publishes port 9000/tcp, already published on this server',
    );
    expect(refusedHostPort(file, 'docker-compose.yml', { envFile: 'PORT=9000\n', forbiddenHostPorts: [], maxHostPorts: 0 })).toBeNull();
  });
});
