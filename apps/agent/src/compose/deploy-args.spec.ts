import { ComposeCommandError } from '@skiff/domain';
import { describe, expect, it } from 'vitest';
import { deployArgs, servicesToWait } from './deploy-args.js';

describe('deployArgs', () => {
  it('runs the compose type’s default without a custom command', () => {
    expect(deployArgs('container-compose', [])).toMatchObject({ args: ['up', '-d', '--build', '--remove-orphans'], waits: true, named: [] });
    expect(deployArgs('stack', [])).toMatchObject({ args: ['deploy', '--prune', '--with-registry-auth'], waits: true });
  });

  it('keeps a custom up, adding -d when it would attach, and notes the services it names', () => {
    const plan = deployArgs('container-compose', ['docker', 'compose', '--profile', 'tools', 'up', '--scale', 'web=2', 'web', '-t', '5', 'worker']);
    expect(plan.args).toEqual(['--profile', 'tools', 'up', '-d', '--scale', 'web=2', 'web', '-t', '5', 'worker']);
    expect(plan).toMatchObject({ named: ['web', 'worker'], profiles: ['tools'], waits: true });
    expect(plan.notes).toHaveLength(1);
    expect(deployArgs('container-compose', ['up', '--detach']).notes).toEqual([]);
  });

  it('does not wait after commands that start nothing', () => {
    expect(deployArgs('container-compose', ['pull']).waits).toBe(false);
    expect(deployArgs('container-compose', ['build', 'web']).waits).toBe(false);
  });

  it.each([
    [['exec', 'web', 'sh'], 'not a compose subcommand'],
    [['-H', 'tcp://10.0.0.1:2375', 'up'], 'the option -H is not allowed'],
    [['up', '-f', '/etc/passwd'], 'the option -f is not allowed'],
    [['run', '--rm', 'web', 'sh'], 'not a compose subcommand'],
  ])('refuses %j', (command, message) => {
    expect(() => deployArgs('container-compose', command)).toThrow(ComposeCommandError);
    expect(() => deployArgs('container-compose', command)).toThrow(message);
  });

  it('refuses a stack command that names another stack or file', () => {
    expect(() => deployArgs('stack', ['deploy', '-c', 'other.yml'])).toThrow('the option -c is not allowed');
    expect(() => deployArgs('stack', ['deploy', 'other'])).toThrow('takes no names');
  });
});

describe('servicesToWait', () => {
  const services = [
    { name: 'web', profiles: [], replicas: null },
    { name: 'worker', profiles: [], replicas: 0 },
    { name: 'debug', profiles: ['tools'], replicas: null },
  ];
  it('waits for the services that start: no profile or an active one, a scale above 0', () => {
    expect(servicesToWait(services, { named: [], profiles: [] })).toEqual(['web']);
    expect(servicesToWait(services, { named: [], profiles: ['tools'] })).toEqual(['web', 'debug']);
  });
  it('waits only for the services up names', () => {
    expect(servicesToWait(services, { named: ['debug'], profiles: [] })).toEqual(['debug']);
  });
});
