import { describe, expect, it } from 'vitest';
import { EnvError, envList, resolveServiceEnv, resolveServiceVariables } from './env.js';

const resolve = (service: string, environment = '', project = '') =>
  resolveServiceEnv({ service, environment, project });
const failure = (service: string, environment = '', project = '') => {
  try {
    resolve(service, environment, project);
  } catch (error) {
    expect(error).toBeInstanceOf(EnvError);
    return (error as Error).message;
  }
  throw new Error('expected resolveServiceEnv to fail');
};

describe('resolveServiceEnv', () => {
  it('gives KEY=VALUE strings', () => {
    expect(resolve('A=1\nB=two words')).toEqual(['A=1', 'B=two words']);
  });

  it('substitutes project, environment and same-service references', () => {
    const project = 'DB_HOST=db.internal\nREGION=eu';
    const environment = 'DB_NAME=shop_prod';
    const service = 'PORT=5432\nDATABASE_URL=postgres://${{project.DB_HOST}}:${{PORT}}/${{environment.DB_NAME}}';
    expect(resolve(service, environment, project)).toEqual([
      'DB_HOST=db.internal',
      'REGION=eu',
      'DB_NAME=shop_prod',
      'PORT=5432',
      'DATABASE_URL=postgres://db.internal:5432/shop_prod',
    ]);
  });

  it('takes service over environment over project for the final set', () => {
    const project = 'A=project\nB=project\nC=project';
    const environment = 'B=environment\nC=environment';
    const service = 'C=service';
    expect(resolve(service, environment, project)).toEqual(['A=project', 'B=environment', 'C=service']);
  });

  it('lets a reference name its scope even when a nearer scope defines the same name', () => {
    const service = 'LEVEL=service\nP=${{project.LEVEL}}\nE=${{environment.LEVEL}}\nS=${{LEVEL}}';
    expect(resolve(service, 'LEVEL=environment', 'LEVEL=project')).toEqual([
      'LEVEL=service',
      'P=project',
      'E=environment',
      'S=service',
    ]);
  });

  it('allows spaces inside the braces and several references in one value', () => {
    expect(resolve('A=${{ project.X }}-${{project.X}}', '', 'X=1')).toContain('A=1-1');
  });

  it('follows chains within the service, in any order of definition', () => {
    expect(resolve('URL=http://${{HOST}}:${{PORT}}\nHOST=${{project.H}}\nPORT=80', '', 'H=web')).toEqual([
      'H=web',
      'URL=http://web:80',
      'HOST=web',
      'PORT=80',
    ]);
  });

  it('fails on an undefined reference with the exact message for each scope', () => {
    expect(failure('A=${{environment.MISSING}}')).toBe('Invalid environment variable: environment.MISSING');
    expect(failure('A=${{project.MISSING}}')).toBe('Invalid environment variable: project.MISSING');
    expect(failure('A=${{MISSING}}')).toBe('Invalid environment variable: MISSING');
  });

  it('does not look for ${{NAME}} outside the service', () => {
    expect(failure('A=${{ONLY_IN_PROJECT}}', '', 'ONLY_IN_PROJECT=1')).toBe('Invalid environment variable: ONLY_IN_PROJECT');
  });

  it('fails on a reference cycle and names the loop', () => {
    expect(failure('A=${{B}}\nB=${{C}}\nC=${{A}}')).toBe('Environment variable reference cycle: A -> B -> C -> A');
    expect(failure('SELF=x${{SELF}}')).toBe('Environment variable reference cycle: SELF -> SELF');
  });

  it('refuses chains deeper than 64 levels', () => {
    const lines = Array.from({ length: 100 }, (_, i) => `V${i}=\${{V${i + 1}}}`);
    expect(failure([...lines, 'V100=end'].join('\n'))).toMatch(/nest deeper than 64 levels/);
    const shallow = Array.from({ length: 60 }, (_, i) => `V${i}=\${{V${i + 1}}}`);
    expect(resolve([...shallow, 'V60=end'].join('\n'))[0]).toBe('V0=end');
  });

  it('does not interpolate project and environment values (one level across scopes)', () => {
    const project = 'BASE=x\nDERIVED=${{project.BASE}}';
    expect(resolve('S=${{project.DERIVED}}', '', project)).toEqual(['BASE=x', 'DERIVED=${{project.BASE}}', 'S=${{project.BASE}}']);
    expect(resolve('', 'E=${{NOPE}}')).toEqual(['E=${{NOPE}}']);
  });

  it('keeps a ${{ without closing braces, and other dollar forms, as text', () => {
    expect(resolve('A=${{open\nB=$HOME ${X} {{X}}')).toEqual(['A=${{open', 'B=$HOME ${X} {{X}}']);
  });

  it('refuses a malformed reference', () => {
    expect(failure('A=${{}}')).toBe('Invalid environment variable reference: ${{}}');
    expect(failure('A=${{other.X}}')).toBe('Invalid environment variable reference: ${{other.X}}');
    expect(failure('A=${{project.}}')).toBe('Invalid environment variable reference: ${{project.}}');
  });

  it('does not treat a substituted value as a template again', () => {
    expect(resolve('A=${{project.T}}', '', "T='${{B}}'")).toEqual(['T=${{B}}', 'A=${{B}}']);
  });

  it('does not read $ patterns in substituted values', () => {
    expect(resolve("A=${{project.P}}", '', "P='$& $1 $$'")).toContain('A=$& $1 $$');
  });

  it('reports dotenv errors with the level and line, never the value', () => {
    expect(failure('OK=1\nnot a line', '', '')).toBe('Invalid service env (line 2: expected KEY=VALUE)');
    expect(failure('', '', 'X="secret"junk')).toBe('Invalid project env (line 1: unexpected text after the closing quote)');
    expect(failure('', '1A=1')).toMatch(/^Invalid environment env \(line 1: "1A" is not a valid variable name/);
  });

  it('takes null and undefined texts as empty', () => {
    expect(resolveServiceEnv({ service: null, environment: undefined, project: null })).toEqual([]);
  });

  it('offers the same result as a map', () => {
    const vars = resolveServiceVariables({ service: 'A=${{project.B}}', environment: null, project: 'B=1' });
    expect(vars).toEqual(
      new Map([
        ['B', '1'],
        ['A', '1'],
      ]),
    );
    expect(envList(vars)).toEqual(['B=1', 'A=1']);
  });
});
