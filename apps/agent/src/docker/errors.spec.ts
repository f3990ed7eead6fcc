import { describe, expect, it } from 'vitest';
import {
  DockerConflictError,
  DockerError,
  DockerInvalidError,
  DockerNotFoundError,
  DockerSwarmError,
  DockerUnavailableError,
  toDockerError,
} from './errors.js';

/** What docker-modem rejects with when the engine answers an error status. */
function modemError(statusCode: number, json: unknown): Error {
  return Object.assign(new Error(`(HTTP code ${statusCode}) unexpected - whatever `), { statusCode, json });
}

describe('toDockerError', () => {
  it.each([
    [400, DockerInvalidError],
    [404, DockerNotFoundError],
    [409, DockerConflictError],
    [503, DockerSwarmError],
  ])('maps HTTP %i to its class, keeping the engine message', (status, Kind) => {
    const err = toDockerError('op x', modemError(status, { message: 'the engine says no' }));
    expect(err).toBeInstanceOf(Kind);
    expect(err).toBeInstanceOf(DockerError);
    expect(err).toMatchObject({ operation: 'op x', engineMessage: 'the engine says no', statusCode: status });
    expect(err.message).toBe('op x: the engine says no');
  });

  it('keeps other statuses as a plain DockerError', () => {
    const err = toDockerError('update web', modemError(500, { message: 'rpc error: update out of sequence' }));
    expect(err.constructor).toBe(DockerError);
    expect(err).toMatchObject({ statusCode: 500, engineMessage: 'rpc error: update out of sequence' });
  });

  it("falls back to modem's message when the body is not the engine's JSON", () => {
    expect(toDockerError('op', modemError(500, 'plain text body')).engineMessage).toBe('plain text body');
    expect(toDockerError('op', modemError(502, null)).engineMessage).toBe('(HTTP code 502) unexpected - whatever');
  });

  it.each(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EACCES'])('reports %s as an unreachable engine', (code) => {
    const err = toDockerError('info', Object.assign(new Error(`connect ${code} /var/run/docker.sock`), { code }));
    expect(err).toBeInstanceOf(DockerUnavailableError);
    expect(err.statusCode).toBeNull();
    expect(err.engineMessage).toContain('Docker Engine not reachable');
  });

  it('leaves typed errors as they are and wraps anything else', () => {
    const typed = new DockerConflictError('op', 'taken', 409);
    expect(toDockerError('other', typed)).toBe(typed);
    expect(toDockerError('op', 'a string')).toMatchObject({ engineMessage: 'a string', statusCode: null });
  });
});
