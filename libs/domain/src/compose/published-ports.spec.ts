import { describe, expect, it } from 'vitest';
import { composePublishedPorts } from './published-ports.js';

describe('composePublishedPorts', () => {
  it('reads short and long syntax, ranges, protocols and host IPs; leaves out ports the engine picks', () => {
    const file = `
services:
  web:
    image: nginx
    ports:
      - "8080:80"
      - 127.0.0.1:8443:443/tcp
      - "[::1]:5353:53/udp"
      - "9000-9002:9000-9002"
      - "3000"
      - "127.0.0.1::4000"
      - 7000:7000/UDP
  api:
    image: api
    ports:
      - target: 80
        published: "8081"
        host_ip: 0.0.0.0
      - target: 53
        published: 5354
        protocol: udp
      - target: 90
      - "\${API_PORT:-8082}:80"
      - "\${OTHER}:80"
`;
    expect(composePublishedPorts(file)).toEqual({
      ports: ['8080/tcp', '8443/tcp', '5353/udp', '9000/tcp', '9001/tcp', '9002/tcp', '7000/udp', '8081/tcp', '5354/udp', '8082/tcp'],
      unresolved: ['api: ${OTHER}'],
    });
  });

  it('follows merge keys', () => {
    const file = 'x-ports: &p\n  ports: ["80:80"]\nservices:\n  a:\n    <<: *p\n    image: x\n';
    expect(composePublishedPorts(file).ports).toEqual(['80/tcp']);
  });
});
