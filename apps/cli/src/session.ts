import { type ParsedArgs, stringFlag } from './args.js';
import { type Client, createClient } from './client.js';
import { resolveContext } from './config.js';
import type { Io } from './output.js';

/** What a command runs with: its arguments, its streams, and the server once it asks for one. */
export interface Session {
  io: Io;
  args: ParsedArgs;
  json: boolean;
  client(): Client;
  readStdin(): string;
}

export function createSession(io: Io, args: ParsedArgs, readStdin: () => string, fetchImpl?: typeof fetch): Session {
  let client: Client | undefined;
  return {
    io,
    args,
    json: args.options.has('json') && args.options.get('json')!.at(-1) !== 'false',
    client: () => (client ??= createClient(resolveContext(io.env, stringFlag(args, 'context')), fetchImpl)),
    readStdin,
  };
}
