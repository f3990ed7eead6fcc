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

describe('refusedHostPort, values not written as ports', () => {
  const limits = { forbiddenHostPorts, maxHostPorts: 100 };
  it.each([
    ['"+9000:80"', 'web: +9000'],
    ['"09000:80"', 'web: 09000'],
    ['{ target: 80, published: "0x2328" }', 'web: 0x2328'],
    ['{ target: 80, published: "9_000" }', 'web: 9_000'],
    ['"476541:80"', 'web: 476541'],
    ['"9000:80/quic"', 'web: 9000/quic'],
    ['"${PORT}:80"', 'web: ${PORT}'],
  ])('refuses %s', (entry, named) => {
    const text = `services:\n  web:\n    image: busybox\n    ports: [${entry}]\n`;
    expect(refusedHostPort(text, 'docker-compose.yml', { envFile: 'PORT=+9000\n', ...limits })).toBe(
      `docker-compose.yml: ${named}: a published port must be a port or a range of ports of 1 to 65535, written in decimal, of tcp, udp or sctp`,
    );
  });

  it('counts wide ranges repeated through aliases once, naming a forbidden port inside a range', () => {
    const ranges = Array.from({ length: 8 }, () => '"30000-39999:30000-39999"').join(', ');
    const services = Array.from({ length: 500 }, (_, i) => `  s${i}:\n    image: x\n    ports: *p\n`).join('');
    const text = `x-ports: &p [${ranges}]\nservices:\n${services}`;
    expect(refusedHostPort(text, 'c.yml', { envFile: '', forbiddenHostPorts: [], maxHostPorts: 9999 })).toBe('c.yml: publishes 10000 host ports, more than the 9999 a stack may publish');
    expect(refusedHostPort(text, 'c.yml', { envFile: '', forbiddenHostPorts: [], maxHostPorts: 10000 })).toBeNull();
    const forbidden = [{ first: 8999, last: 31000, protocol: 'tcp', reason: 'reserved' }];
    expect(refusedHostPort(text, 'c.yml', { envFile: '', forbiddenHostPorts: forbidden, maxHostPorts: 0 })).toBe('c.yml: service "s0" publishes port 30000/tcp, reserved');
  });
});
