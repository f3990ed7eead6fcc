import { describe, expect, it } from 'vitest';
import { composePublishedPorts, countPorts } from './published-ports.js';

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
      ports: ['8080/tcp', '8081/tcp', '8082/tcp', '8443/tcp', '9000/tcp', '9001/tcp', '9002/tcp', '5353/udp', '5354/udp', '7000/udp'],
      unresolved: ['api: ${OTHER}'],
      invalid: [],
    });
    expect(found.published.map(({ service, range: r }) => `${service} ${r.first}-${r.last}/${r.protocol}`)).toEqual([
      'web 8080-8080/tcp',
      'web 8443-8443/tcp',
      'web 5353-5353/udp',
      'web 9000-9002/tcp',
      'web 7000-7000/udp',
      'api 8081-8081/tcp',
      'api 5354-5354/udp',
      'api 8082-8082/tcp',
    ]);
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
      ports: ['7000/tcp', '8081/tcp', '8082/tcp', '9000/tcp', '9001/tcp', '5353/udp'],
      // `$$` is a literal `$`: not a port (Compose refuses it), listed with the unresolved.
      unresolved: ['web: ${MISSING:?needed}', 'web: ${NOPE}', 'web: $$EMPTY'],
    });
    // Without the variables, only the defaults resolve.
    expect(composePublishedPorts(file).ports).toEqual(['8082/tcp', '8083/tcp']);
  });

  it('lists published values Compose reads as a number that are not written as a decimal port or range of 1 to 65535', () => {
    const file = [
      'services:',
      '  web:',
      '    image: nginx',
      '    ports:',
      '      - "+28081:8080"',
      '      - "028081:8080"',
      '      - target: 80',
      '        published: "0x6DB1"',
      '      - target: 80',
      '        published: "0o66661"',
      '      - target: 80',
      '        published: "+28081"',
      '      - target: 80',
      '        published: "28_081"',
      '      - "476541:8080"',
      '      - "28090-70000:8090"',
      '      - "28083:8083"',
      '      - "0:80"',
      '      - "${P}:80"',
      '',
    ].join('\n');
    const found = composePublishedPorts(file, new Map([['P', '+28084']]));
    expect(found.invalid).toEqual(['web: +28081', 'web: 028081', 'web: 0x6DB1', 'web: 0o66661', 'web: +28081', 'web: 28_081', 'web: 476541', 'web: 28090-70000', 'web: ${P}']);
    expect(found.ports).toEqual(['28083/tcp']);
  });

  it('merges ranges per protocol before listing them: each port counted once however often a range repeats through aliases; only tcp, udp and sctp', () => {
    const ranges = Array.from({ length: 8 }, (_, i) => `"30000-39999:${30000 + i}-${39999 + i}"`).join(', ');
    const services = Array.from({ length: 500 }, (_, i) => `  s${i}:\n    image: x\n    ports: *p\n`).join('');
    const extra = '  u:\n    image: x\n    ports: ["5000-5001:5000-5001/udp", "5001-5003:5001-5003/UDP", "6000:6000/sctp"]\n  odd:\n    image: x\n    ports: ["7000:7000/quic"]\n';
    const found = composePublishedPorts(`x-ports: &p [${ranges}]\nservices:\n${services}${extra}`);
    expect(found.ranges).toEqual([
      { protocol: 'tcp', first: 30000, last: 39999 },
      { protocol: 'udp', first: 5000, last: 5003 },
      { protocol: 'sctp', first: 6000, last: 6000 },
    ]);
    expect(countPorts(found.ranges)).toBe(10000 + 4 + 1);
    expect(found.invalid).toEqual(['odd: 7000/quic']);
  });
});

