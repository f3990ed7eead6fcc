import { describe, expect, it } from 'vitest';
import { ComposeCommandError, DEFAULT_COMPOSE_COMMANDS, checkComposeCommand, composeCommandArgs } from './command.js';

describe('composeCommandArgs', () => {
  it('answers the default of the compose type when there is no custom command', () => {
    expect(composeCommandArgs('container-compose', null)).toEqual(['up', '-d', '--build', '--remove-orphans']);
    expect(composeCommandArgs('container-compose', '  ')).toEqual([...DEFAULT_COMPOSE_COMMANDS['container-compose']]);
    expect(composeCommandArgs('stack', undefined)).toEqual(['deploy', '--prune', '--with-registry-auth']);
  });

  it('splits a custom command into words, without a shell, and drops a program name typed before it', () => {
    expect(composeCommandArgs('container-compose', 'up -d --build web "db 2"')).toEqual(['up', '-d', '--build', 'web', 'db 2']);
    expect(composeCommandArgs('container-compose', 'docker compose up -d')).toEqual(['up', '-d']);
    expect(composeCommandArgs('container-compose', 'docker-compose --profile tools up -d')).toEqual(['--profile', 'tools', 'up', '-d']);
    expect(composeCommandArgs('container-compose', '--profile=tools --compatibility pull')).toEqual(['--profile=tools', '--compatibility', 'pull']);
    expect(composeCommandArgs('stack', 'docker stack deploy --prune --resolve-image never')).toEqual(['deploy', '--prune', '--resolve-image', 'never']);
    expect(composeCommandArgs('stack', 'deploy --resolve-image=changed --detach=false -q')).toEqual(['deploy', '--resolve-image=changed', '--detach=false', '-q']);
    // Shell syntax is only words: `;` and `&&` reach compose as arguments (and compose refuses them as service names).
    expect(composeCommandArgs('container-compose', 'up -d ; rm -rf /')).toEqual(['up', '-d', ';', 'rm', '-rf', '/']);
  });

  it.each([
    ['container-compose', 'rm web', /"rm" is not a compose subcommand/],
    ['container-compose', 'down -v', /"down" is not a compose subcommand/],
    ['container-compose', 'exec web sh', /"exec"/],
    ['container-compose', 'docker compose', /no compose subcommand/],
    ['container-compose', '-p other up -d', /option -p is not allowed/],
    ['container-compose', '--file=/etc/passwd up', /option --file is not allowed/],
    ['container-compose', 'up -d --env-file /root/.env', /option --env-file is not allowed/],
    ['container-compose', '--project-directory /tmp up', /option --project-directory/],
    ['container-compose', '-H tcp://10.0.0.1:2375 up', /option -H is not allowed/],
    ['container-compose', '--verbose up', /global option --verbose is not allowed/],
    ['container-compose', 'up "unterminated', /Unterminated double quote/],
    ['stack', 'up --bundle-file x.dab', /option --bundle-file is not allowed/],
    ['stack', 'rm mystack', /"rm" is not a stack subcommand/],
    ['stack', 'deploy -c /etc/compose.yml other', /option -c is not allowed/],
    ['stack', 'deploy other-stack', /takes no names/],
    ['stack', 'deploy --resolve-image sometimes', /--resolve-image takes/],
    ['stack', 'deploy --orchestrator kubernetes', /option --orchestrator is not allowed/],
    ['stack', 'docker compose up', /"docker" is not a stack subcommand/],
  ])('refuses %s command %j', (type, command, reason) => {
    expect(() => composeCommandArgs(type, command)).toThrow(ComposeCommandError);
    expect(() => composeCommandArgs(type, command)).toThrow(reason);
  });

  it('refuses an unknown compose type', () => {
    expect(() => checkComposeCommand('kubernetes', ['up'])).toThrow(/unknown compose type/);
  });
});
