/**
 * Compose templates. Golden file: libs/domain/src/golden/compose/template-*.json; after an
 * intended change, `UPDATE_GOLDEN=1 npx vitest run libs/domain/src/compose` and review the diff.
 */
import { describe, expect, it } from 'vitest';
import { parseDotenv } from '../dotenv.js';
import {
  type ComposeTemplate,
  decodeTemplate,
  formatDotenvText,
  MAX_TEMPLATE_BYTES,
  parseTemplateConfig,
  processTemplate,
  type TemplateRuntime,
  TemplateError,
} from './template.js';
import { expectGolden, fakeRandom, WORDPRESS } from './test-fixtures.js';

const TOML_CONFIG = `[variables]
main_domain = "\${domain}"
db_password = "\${password:24}"
db_user = "wordpress"
auth_salt = "\${base64:48}"

[config]
env = [
  "DB_USER=\${db_user}",
  "DB_PASSWORD=\${db_password}",
  "WORDPRESS_URL=https://\${main_domain}",
  "AUTH_SALT=\${auth_salt}",
  "INSTANCE_ID=\${uuid}",
  "SHORT=\${hash}",
]

[[config.domains]]
serviceName = "wordpress"
port = 80
host = "\${main_domain}"

[[config.mounts]]
filePath = "/config/uploads.ini"
content = """
upload_max_filesize = 64M
; \${DB_USER} is PHP's business, \${db_user} is the template's
user = \${db_user}
"""
`;

const encode = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');

function runtime(overrides: Partial<TemplateRuntime> = {}): TemplateRuntime {
  let n = 0;
  return {
    randomBytes: fakeRandom(),
    generateDomain: () => `blog-${(n += 1)}-203-0-113-7.sslip.io`,
    ...overrides,
  };
}

/** A template with the given config object and the WordPress compose file. */
function template(config: Record<string, unknown>, compose = WORDPRESS): ComposeTemplate {
  return { compose, config: parseTemplateConfig(config) };
}

const env = (config: Record<string, unknown>, rt = runtime()) => parseDotenv(processTemplate(template(config), rt).env).variables;

describe('decodeTemplate', () => {
  it('reads base64 JSON with the config as TOML text', () => {
    const decoded = decodeTemplate(encode({ compose: WORDPRESS, config: TOML_CONFIG }));
    expect(decoded.compose).toBe(WORDPRESS);
    expect(decoded.config.variables).toEqual([
      ['main_domain', '${domain}'],
      ['db_password', '${password:24}'],
      ['db_user', 'wordpress'],
      ['auth_salt', '${base64:48}'],
    ]);
    expect(decoded.config.domains).toEqual([{ serviceName: 'wordpress', port: 80, host: '${main_domain}', path: null }]);
    expect(decoded.config.env[0]).toEqual(['DB_USER', '${db_user}']);
    expect(decoded.config.mounts).toEqual([{ filePath: 'config/uploads.ini', content: expect.stringContaining('upload_max_filesize') }]);
  });

  it('reads the config as a JSON object too, and base64url with line breaks', () => {
    const config = { variables: { a: 'x' }, config: { env: { A: '${a}' }, domains: [{ serviceName: 'db', port: 3306 }] } };
    const text = Buffer.from(JSON.stringify({ compose: WORDPRESS, config })).toString('base64url');
    const wrapped = text.replace(/(.{60})/g, '$1\n');
    expect(decodeTemplate(wrapped).config).toEqual({
      variables: [['a', 'x']],
      env: [['A', '${a}']],
      domains: [{ serviceName: 'db', port: 3306, host: null, path: null }],
      mounts: [],
    });
  });

  it('takes a template without config', () => {
    expect(decodeTemplate(encode({ compose: WORDPRESS })).config).toEqual({ variables: [], domains: [], env: [], mounts: [] });
  });

  it.each([
    ['', 'the template is empty'],
    ['not base64!', 'the template is not base64'],
    [Buffer.from([0xff, 0xfe, 0x00]).toString('base64'), 'not UTF-8'],
    [encode('compose: x'), 'not JSON'],
    [encode([1, 2]), 'must be a JSON object'],
    [encode({ config: {} }), 'has no "compose" text'],
    [encode({ compose: '  ' }), 'has no "compose" text'],
    [encode({ compose: WORDPRESS, config: '[variables\nx = 1' }), "the template's config is not valid TOML"],
    [encode({ compose: WORDPRESS, config: 3 }), 'must be TOML text or an object'],
    ['A'.repeat(Math.ceil((MAX_TEMPLATE_BYTES * 4) / 3) + 16), 'larger than'],
  ])('refuses %#: %s', (input, reason) => {
    expect(() => decodeTemplate(input)).toThrow(TemplateError);
    expect(() => decodeTemplate(input)).toThrow(reason);
  });
});

describe('parseTemplateConfig', () => {
  it('reads env as a table or a list, numbers and booleans as text', () => {
    expect(parseTemplateConfig({ config: { env: { A: 1, B: true, C: 'x=y' } } }).env).toEqual([
      ['A', '1'],
      ['B', 'true'],
      ['C', 'x=y'],
    ]);
    expect(parseTemplateConfig({ config: { env: ['A=1', 'B=x=y', 'C='] } }).env).toEqual([
      ['A', '1'],
      ['B', 'x=y'],
      ['C', ''],
    ]);
  });

  it('normalises mount paths to relative ones', () => {
    const mounts = parseTemplateConfig({ config: { mounts: [{ filePath: '/a/b.conf', content: '' }, { filePath: './c', content: 'x' }] } }).mounts;
    expect(mounts.map((m) => m.filePath)).toEqual(['a/b.conf', 'c']);
  });

  it.each([
    [{ variables: { '1x': 'a' } }, 'variables: "1x" is not a valid name'],
    [{ variables: { 'a-b': 'a' } }, 'not a valid name'],
    [{ variables: { password: 'a' } }, 'variables: "password" is the name of a helper'],
    [{ variables: { a: ['x'] } }, 'variables.a must be a string, a number or a boolean'],
    [{ variables: { a: { b: 1 } } }, 'variables.a must be a string'],
    [{ variables: ['a'] }, 'variables must be a table'],
    [{ config: { domains: {} } }, 'config.domains must be a list'],
    [{ config: { domains: [{ port: 80 }] } }, 'config.domains[0].serviceName must be a service name'],
    [{ config: { domains: [{ serviceName: 'web', port: 0 }] } }, 'config.domains[0].port must be a whole number from 1 to 65535'],
    [{ config: { domains: [{ serviceName: 'web', port: 65536 }] } }, 'port must be a whole number'],
    [{ config: { domains: [{ serviceName: 'web', port: '80' }] } }, 'port must be a whole number'],
    [{ config: { domains: [{ serviceName: 'web', port: 80, host: 5 }] } }, 'config.domains[0].host must be a string'],
    [{ config: { env: ['NOEQUALS'] } }, 'config.env[0] must be NAME=value'],
    [{ config: { env: ['1A=x'] } }, 'config.env: "1A" is not a valid variable name'],
    [{ config: { env: ['A=1', 'A=2'] } }, 'config.env: "A" is given twice'],
    [{ config: { env: 'A=1' } }, 'config.env must be a table'],
    [{ config: { mounts: [{ filePath: '../etc/passwd', content: 'x' }] } }, "config.mounts[0].filePath must be a relative path inside the stack's directory"],
    [{ config: { mounts: [{ filePath: 'a/../../b', content: 'x' }] } }, 'inside the stack'],
    [{ config: { mounts: [{ filePath: 'a//b', content: 'x' }] } }, 'inside the stack'],
    [{ config: { mounts: [{ filePath: 'a\\..\\b', content: 'x' }] } }, 'inside the stack'],
    [{ config: { mounts: [{ filePath: '/', content: 'x' }] } }, 'inside the stack'],
    [{ config: { mounts: [{ content: 'x' }] } }, 'config.mounts[0].filePath must be a string'],
    [{ config: [] }, 'config must be a table'],
  ])('refuses %j', (config, reason) => {
    expect(() => parseTemplateConfig(config)).toThrow(TemplateError);
    expect(() => parseTemplateConfig(config)).toThrow(reason);
  });
});

describe('processTemplate', () => {
  it('golden: the WordPress template', () => {
    const processed = processTemplate(decodeTemplate(encode({ compose: WORDPRESS, config: TOML_CONFIG })), runtime());
    expectGolden('template-wordpress.json', `${JSON.stringify(processed, null, 2)}\n`);
  });

  it('is deterministic for a given random source and domain generator', () => {
    const decoded = decodeTemplate(encode({ compose: WORDPRESS, config: TOML_CONFIG }));
    expect(processTemplate(decoded, runtime())).toEqual(processTemplate(decoded, runtime()));
    expect(processTemplate(decoded, runtime({ randomBytes: fakeRandom(99) }))).not.toEqual(processTemplate(decoded, runtime()));
  });

  it('keeps the compose text as it is (its ${VAR} are Compose\'s)', () => {
    const compose = 'services:\n  web:\n    image: "nginx:${TAG:-1}"\n    environment: {P: "${password:8}"}\n';
    expect(processTemplate(template({}, compose), runtime()).compose).toBe(compose);
  });

  it('shares one value per variable, and makes a fresh value at each helper occurrence', () => {
    const values = env({
      variables: { pw: '${password:12}' },
      config: { env: ['A=${pw}', 'B=${pw}', 'C=${password:12}', 'D=${password:12}'] },
    });
    expect(values.get('A')).toBe(values.get('B'));
    expect(values.get('C')).not.toBe(values.get('D'));
    for (const name of ['A', 'C', 'D']) expect(values.get(name)).toMatch(/^[A-Za-z0-9]{12}$/);
  });

  it('produces each helper in its documented form', () => {
    const values = env({
      config: {
        env: {
          P: '${password}',
          P5: '${password:5}',
          B: '${base64}',
          B3: '${base64:3}',
          H: '${hash}',
          H5: '${hash:5}',
          U: '${uuid}',
          D: '${domain}',
        },
      },
    });
    expect(values.get('P')).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(values.get('P5')).toMatch(/^[A-Za-z0-9]{5}$/);
    expect(Buffer.from(values.get('B') as string, 'base64')).toHaveLength(32);
    expect(Buffer.from(values.get('B3') as string, 'base64')).toHaveLength(3);
    expect(values.get('H')).toMatch(/^[0-9a-f]{8}$/);
    expect(values.get('H5')).toMatch(/^[0-9a-f]{5}$/);
    expect(values.get('U')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(values.get('D')).toBe('blog-1-203-0-113-7.sslip.io');
  });

  it('draws password characters without modulo bias (bytes 248..255 are skipped)', () => {
    const bytes = [255, 248, 0, 61, 249, 62, 1];
    let i = 0;
    const rt = runtime({ randomBytes: (size) => Uint8Array.from({ length: size }, () => bytes[i++ % bytes.length]) });
    expect(env({ config: { env: { P: '${password:4}' } } }, rt).get('P')).toBe('A9AB');
  });

  it('lets variables use each other in any order, and env entries use env entries', () => {
    const values = env({
      variables: { url: 'https://${host}/', host: 'app.${zone}', zone: 'example.org' },
      config: { env: ['FULL=${url}x', 'BASE=${API}/v1', 'API=${url}api'] },
    });
    expect(values.get('FULL')).toBe('https://app.example.org/x');
    expect(values.get('API')).toBe('https://app.example.org/api');
    expect(values.get('BASE')).toBe('https://app.example.org/api/v1');
  });

  it('passes Skiff references (${{project.X}}) through', () => {
    expect(env({ config: { env: { A: '${{project.SMTP_HOST}}:${{ environment.PORT }}' } } }).get('A')).toBe(
      '${{project.SMTP_HOST}}:${{ environment.PORT }}',
    );
  });

  it('gives domains their host (a variable, a helper, or generated when absent) and path', () => {
    const processed = processTemplate(
      template({
        variables: { main: 'Blog.Example.org' },
        config: {
          domains: [
            { serviceName: 'wordpress', port: 80, host: '${main}', path: '/' },
            { serviceName: 'wordpress', port: 8080 },
            { serviceName: 'db', port: 3306, host: '${domain}', path: '/admin' },
          ],
        },
      }),
      runtime(),
    );
    expect(processed.domains).toEqual([
      { serviceName: 'wordpress', port: 80, host: 'blog.example.org', path: '/' },
      { serviceName: 'wordpress', port: 8080, host: 'blog-1-203-0-113-7.sslip.io', path: null },
      { serviceName: 'db', port: 3306, host: 'blog-2-203-0-113-7.sslip.io', path: '/admin' },
    ]);
  });

  it('replaces only variables and helpers in mount contents, leaving other ${…} as written', () => {
    const processed = processTemplate(
      template({
        variables: { name: 'blog' },
        config: { mounts: [{ filePath: 'nginx.conf', content: 'server_name ${name}; set $x ${HOST}; ${X:-y} ${ } ${{project.A}} ${hash:4}' }] },
      }),
      runtime(),
    );
    expect(processed.mounts[0].content).toMatch(/^server_name blog; set \$x \$\{HOST\}; \$\{X:-y\} \$\{ \} \$\{\{project\.A\}\} [0-9a-f]{4}$/);
  });

  it('writes env text that Skiff\'s dotenv parser reads back exactly', () => {
    const entries: [string, string][] = [
      ['PLAIN', 'abc'],
      ['SPACES', ' a b '],
      ['HASH', 'a #b'],
      ['QUOTES', `'"`],
      ['MULTI', 'l1\nl2\r\n\tx'],
      ['BACKSLASH', 'C:\\x\\n'],
      ['EMPTY', ''],
      ['DOLLAR', '$HOME ${X}'],
    ];
    const parsed = parseDotenv(formatDotenvText(entries));
    expect(parsed.issues).toEqual([]);
    expect([...parsed.variables]).toEqual(entries);
  });

  describe('refusals, each naming the place', () => {
    it.each([
      [{ config: { env: { A: '${nope}' } } }, 'config.env.A: unknown variable "nope" in ${nope}'],
      [{ config: { env: { A: '${secret:12}' } } }, 'config.env.A: unknown helper "secret" in ${secret:12}'],
      [{ config: { env: { A: '${X:-default}' } } }, 'unknown helper "X"'],
      [{ config: { env: { A: '${ a }' } } }, 'config.env.A: unsupported reference ${ a }'],
      [{ config: { env: { A: '${password:0}' } } }, 'config.env.A: in ${password:0}, N must be a whole number from 1 to 256'],
      [{ config: { env: { A: '${password:257}' } } }, 'N must be a whole number from 1 to 256'],
      [{ config: { env: { A: '${base64:-3}' } } }, 'N must be a whole number'],
      [{ config: { env: { A: '${hash:abc}' } } }, 'N must be a whole number'],
      [{ config: { env: { A: '${hash:}' } } }, 'N must be a whole number'],
      [{ config: { env: { A: '${uuid:4}' } } }, 'the helper "uuid" takes no argument'],
      [{ config: { env: { A: '${domain:x}' } } }, 'the helper "domain" takes no argument'],
      [{ variables: { a: '${b}', b: '${a}' } }, 'references loop: variables.a -> variables.b -> variables.a'],
      [{ config: { env: { A: '${A}' } } }, 'references loop: env.A -> env.A'],
      [{ variables: { a: '${A}' }, config: { env: { A: 'x' } } }, 'variables.a: unknown variable "A"'],
      [{ config: { domains: [{ serviceName: 'ghost', port: 80 }] } }, 'config.domains[0].serviceName: service "ghost" is not in the template\'s compose file'],
      [{ config: { domains: [{ serviceName: 'db', port: 80, host: 'a b' }] } }, 'config.domains[0].host: "a b" is not a host name'],
      [{ config: { domains: [{ serviceName: 'db', port: 80, host: 'x.org', path: 'admin' }] } }, 'config.domains[0].path must start with "/"'],
      [{ config: { mounts: [{ filePath: 'a', content: '${password:999}' }] } }, 'config.mounts[0].content: in ${password:999}'],
    ])('%j', (config, reason) => {
      const run = () => processTemplate(template(config), runtime());
      expect(run).toThrow(TemplateError);
      expect(run).toThrow(reason);
    });

    it('a generated domain without a generator', () => {
      const rt = { randomBytes: fakeRandom() };
      expect(() => processTemplate(template({ config: { env: { D: '${domain}' } } }), rt)).toThrow('a generated domain is needed');
      expect(() => processTemplate(template({ config: { domains: [{ serviceName: 'db', port: 1 }] } }), rt)).toThrow(
        'config.domains[0].host: a generated domain is needed',
      );
    });

    it('a compose text that is not a compose file', () => {
      expect(() => processTemplate(template({}, 'services: [a]'), runtime())).toThrow("the template's compose file: `services`");
    });
  });

  it('does not change the template it is given', () => {
    const decoded = decodeTemplate(encode({ compose: WORDPRESS, config: TOML_CONFIG }));
    const copy = structuredClone(decoded);
    processTemplate(decoded, runtime());
    expect(decoded).toEqual(copy);
  });
});
