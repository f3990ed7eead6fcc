import { describe, expect, it } from 'vitest';
import type { ServiceInfo, TaskInfo } from '../docker/driver.js';
import { containerStateOf, readComposeRunning, readComposeStopped, readStackRunning, type ContainerState } from './readiness.js';

const container = (service: string, overrides: Partial<ContainerState> = {}): ContainerState => ({
  id: `id-${service}`,
  name: `p_${service}_1`,
  service,
  oneOff: false,
  status: 'running',
  restarting: false,
  exitCode: 0,
  restartCount: 0,
  startedAt: '2026-01-01T00:00:00Z',
  health: null,
  restartPolicy: 'no',
  ...overrides,
});

describe('readComposeRunning', () => {
  it('is done when every expected service runs, naming the containers to watch', () => {
    const reading = readComposeRunning(['web', 'db'], [container('web'), container('db', { health: 'healthy' })]);
    expect(reading).toEqual({
      phase: 'done',
      summary: 'web: running; db: running, healthy',
      settling: ['id-db/0/2026-01-01T00:00:00Z', 'id-web/0/2026-01-01T00:00:00Z'],
    });
  });

  it('waits for missing containers, health checks and restarts', () => {
    expect(readComposeRunning(['web'], [])).toMatchObject({ phase: 'waiting', summary: 'web: no container yet' });
    expect(readComposeRunning(['web'], [container('web', { health: 'starting' })])).toMatchObject({ phase: 'waiting' });
    expect(readComposeRunning(['web'], [container('web', { status: 'restarting', restarting: true, exitCode: 3, restartCount: 2 })])).toMatchObject({
      phase: 'waiting',
      summary: 'web: restarting (exit code 3, 2 restarts)',
    });
  });

  it('counts a one-shot job that ended with 0, fails one that ended otherwise', () => {
    expect(readComposeRunning(['migrate'], [container('migrate', { status: 'exited' })]).phase).toBe('done');
    expect(readComposeRunning(['web'], [container('web', { status: 'exited', exitCode: 2 })])).toEqual({
      phase: 'failed',
      reason: 'service web exited with code 2',
    });
    expect(readComposeRunning(['web'], [container('web', { status: 'exited', restartPolicy: 'always' })]).phase).toBe('failed');
  });

  it('ignores one-off containers', () => {
    expect(readComposeRunning(['web'], [container('web', { oneOff: true })]).phase).toBe('waiting');
    expect(readComposeStopped([container('web', { oneOff: true })]).phase).toBe('done');
  });
});

describe('readStackRunning', () => {
  const info = (name: string, overrides: Partial<ServiceInfo> = {}): ServiceInfo => ({
    id: name,
    name,
    version: 1,
    labels: {},
    image: 'x',
    replicas: 1,
    updateState: null,
    updateMessage: null,
    createdAt: '',
    updatedAt: '',
    ...overrides,
  });
  const task = (id: string, overrides: Partial<TaskInfo> = {}): TaskInfo => ({
    id,
    slot: 1,
    nodeId: 'n',
    state: 'running',
    desiredState: 'running',
    message: 'started',
    error: null,
    exitCode: null,
    containerId: 'c',
    image: 'x',
    labels: {},
    forceUpdate: 0,
    createdAt: '',
    updatedAt: '',
    ...overrides,
  });

  it('is done when every service runs its replicas', () => {
    const reading = readStackRunning(['s_web', 's_db'], [{ info: info('s_web'), tasks: [task('t1')] }, { info: info('s_db', { replicas: 2 }), tasks: [task('t2'), task('t3')] }], new Set());
    expect(reading).toEqual({ phase: 'done', summary: 's_web: 1/1 running; s_db: 2/2 running', settling: ['t1', 't2', 't3'] });
  });

  it('waits for services not created yet and for old tasks still shutting down', () => {
    expect(readStackRunning(['s_web'], [], new Set()).phase).toBe('waiting');
    const tasks = [task('new'), task('old', { desiredState: 'shutdown' })];
    expect(readStackRunning(['s_web'], [{ info: info('s_web'), tasks }], new Set(['old'])).phase).toBe('waiting');
  });

  it('fails on a new failed task or a rolled back update, not on a known failed task', () => {
    const failedTask = task('f', { state: 'failed', desiredState: 'shutdown', error: 'task: non-zero exit (1)', exitCode: 1 });
    expect(readStackRunning(['s_web'], [{ info: info('s_web'), tasks: [failedTask] }], new Set())).toEqual({
      phase: 'failed',
      reason: 'service s_web: task failed: task: non-zero exit (1) (exit code 1)',
    });
    expect(readStackRunning(['s_web'], [{ info: info('s_web'), tasks: [failedTask, task('t')] }], new Set(['f'])).phase).toBe('done');
    expect(readStackRunning(['s_web'], [{ info: info('s_web', { updateState: 'rollback_completed' }), tasks: [task('t')] }], new Set()).phase).toBe('failed');
  });
});

describe('containerStateOf', () => {
  it('reads the line the inspect format prints', () => {
    const line =
      '{"id":"abc","name":"/p_web_1","status":"running","restarting":false,"exitCode":0,"startedAt":"t","health":null,"restartCount":2,"restartPolicy":"always","service":"web","oneOff":"False"}';
    expect(containerStateOf(line)).toEqual({
      id: 'abc',
      name: 'p_web_1',
      status: 'running',
      restarting: false,
      exitCode: 0,
      startedAt: 't',
      health: null,
      restartCount: 2,
      restartPolicy: 'always',
      service: 'web',
      oneOff: false,
    });
    expect(containerStateOf(line.replace('"web"', 'null').replace('"False"', '"True"'))).toMatchObject({ service: '', oneOff: true });
  });
});
