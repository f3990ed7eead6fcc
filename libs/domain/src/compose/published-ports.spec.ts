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
    const found = composePublishedPorts(file);
    expect(found).toMatchObject({
      ports: ['8080/tcp', '8443/tcp', '5353/udp', '9000/tcp', '9001/tcp', '9002/tcp', '7000/udp', '8081/tcp', '5354/udp', '8082/tcp'],
      unresolved: ['api: ${OTHER}'],
    });
    expect(found.published.map((p) => `${p.service} ${p.port}`)).toEqual(found.ports.map((port, i) => `${i < 7 ? 'web' : 'api'} ${port}`));
  });

  it('follows merge keys', () => {
    const file = 'x-ports: &p\n  ports: ["80:80"]\nservices:\n  a:\n    <<: *p\n    image: x\n';
    expect(composePublishedPorts(file).ports).toEqual(['80/tcp']);
  });

  it("resolves interpolations with the stack's variables as Compose does, defaults where they have none", () => {
    const file = [
      'services:',
      '  web:',
      '    image: nginx',
      '    ports:',
      '      - "${PORT}:80"',
      '      - "$UDP:53/udp"',
      '      - "${EMPTY:-8082}:80"',
      '      - "${EMPTY-8083}:80"',
      '      - "${MISSING:?needed}:80"',
      '      - "${FIRST}-${LAST}:9000-9001"',
      '      - target: 80',
      '        published: ${LONG}',
      '      - "${NOPE}:81"',
      '      - "${UNCLOSED:82"',
      '      - "$$EMPTY:83"',
      '',
    ].join('\n');
    const env = new Map([['PORT', '8081'], ['UDP', '5353'], ['EMPTY', ''], ['FIRST', '9000'], ['LAST', '9001'], ['LONG', '7000']]);
    expect(composePublishedPorts(file, env)).toMatchObject({
      ports: ['8081/tcp', '5353/udp', '8082/tcp', '9000/tcp', '9001/tcp', '7000/tcp'],
      // `$$` is a literal `$`: not a port (Compose refuses it), listed with the unresolved.
      unresolved: ['web: ${MISSING:?needed}', 'web: ${NOPE}', 'web: $$EMPTY'],
    });
    // Without the variables, only the defaults resolve.
    expect(composePublishedPorts(file).ports).toEqual(['8082/tcp', '8083/tcp']);
  });
});
