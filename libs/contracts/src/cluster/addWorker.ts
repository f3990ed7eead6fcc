import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { JoinCommand } from './join.js';

export const addWorker = defineContract({
  method: 'POST',
  summary: 'The command that joins a new machine to a server\'s swarm as a worker',
  description:
    'Run the answered `command` (`docker swarm join --token … <manager address>`) on the new machine. The token is a secret of the swarm: anyone holding it can join a worker. Only an administrator of the organization owning the server (the platform administrator for `local`) may ask.',
  input: z.object({ serverId: RequiredId }),
  output: JoinCommand,
  access: { role: 'admin' },
  extension: true,
  example: { serverId: 'srv_example' },
});
