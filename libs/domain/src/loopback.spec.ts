import { describe, expect, it } from 'vitest';
import { grpcTargetHost, isLoopbackHost } from './loopback.js';

describe('loopback addresses', () => {
  it('are localhost, 127.0.0.0/8 and ::1', () => {
    for (const h of ['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', 'LOCALHOST', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com', 'localhost.example.com', '128.0.0.1', '']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('are read from gRPC targets', () => {
    expect(grpcTargetHost('127.0.0.1:50051')).toBe('127.0.0.1');
    expect(grpcTargetHost('[::1]:50051')).toBe('::1');
    expect(grpcTargetHost('dns:///cp.example.com:50051')).toBe('cp.example.com');
    expect(grpcTargetHost('dns://8.8.8.8/cp.example.com:50051')).toBe('cp.example.com');
    expect(grpcTargetHost('ipv4:10.0.0.1:50051')).toBe('10.0.0.1');
    expect(grpcTargetHost('localhost')).toBe('localhost');
    expect(grpcTargetHost('unix:///run/skiff.sock')).toBeNull();
  });
});
