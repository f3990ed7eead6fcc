import { CommandKind, commandKindToJSON } from '@skiff/proto';
import { describe, expect, it } from 'vitest';
import { COMMAND_KINDS, commandKindOf } from './index.js';

const name = (kind: CommandKind) => commandKindToJSON(kind);

describe('the command kind registry', () => {
  it('has a definition for every wire kind', () => {
    const covered = new Set(COMMAND_KINDS.flatMap((d) => d.kinds));
    const wire = Object.values(CommandKind).filter(
      (k): k is CommandKind => typeof k === 'number' && k !== CommandKind.COMMAND_KIND_UNSPECIFIED && k !== CommandKind.UNRECOGNIZED,
    );
    expect(wire.filter((k) => !covered.has(k)).map(name)).toEqual([]);
  });

  it('finds a row by its kind and the type of its workload key', () => {
    const deploy = name(CommandKind.COMMAND_KIND_DEPLOY_APPLICATION);
    expect(commandKindOf({ kind: deploy, workloadKey: 'application:app_1' })?.name).toBe('deploy application');
    expect(commandKindOf({ kind: deploy, workloadKey: 'cache:rds_1' })?.name).toBe('cache deploy');
    expect(commandKindOf({ kind: name(CommandKind.COMMAND_KIND_REMOVE_WORKLOAD), workloadKey: 'compose:cmp_1' })?.name).toBe('workload lifecycle');
    expect(commandKindOf({ kind: name(CommandKind.COMMAND_KIND_APPLY_PROXY_CONFIG), workloadKey: 'proxy:local' })?.name).toBe('apply proxy config');
    expect(commandKindOf({ kind: name(CommandKind.COMMAND_KIND_DEPLOY_COMPOSE), workloadKey: 'cache:rds_1' })).toBeUndefined();
    expect(commandKindOf({ kind: deploy, workloadKey: 'nonsense' })).toBeUndefined();
  });

  it('tells deploys (what killBuild stops) from the other kinds', () => {
    expect(commandKindOf({ kind: name(CommandKind.COMMAND_KIND_DEPLOY_COMPOSE), workloadKey: 'compose:cmp_1' })?.deploys).toBe(true);
    expect(commandKindOf({ kind: name(CommandKind.COMMAND_KIND_STOP_WORKLOAD), workloadKey: 'application:app_1' })?.deploys).toBeFalsy();
  });
});
