import type { RouterHandlers } from '../http/context.js';
import type { DatabaseLifecycle, DatabaseServices } from '../services/databases/index.js';
import { ENGINE_OF_ROUTER } from '../services/databases/index.js';

type DatabaseRouter = 'dbA' | 'dbB' | 'dbC' | 'dbD' | 'dbE';
type Input = Record<string, unknown>;

/** The handlers of one database router (dbA..dbE): the same operations, for that router's engine. */
export function databaseHandlers<R extends DatabaseRouter>(router: R, databases: DatabaseServices, lifecycle: DatabaseLifecycle): RouterHandlers<R> {
  const { engine } = ENGINE_OF_ROUTER[router];
  const idField = `${router}Id`;
  const id = (input: Input) => String(input[idField]);
  const fields = (input: Input) => Object.fromEntries(Object.entries(input).filter(([key]) => key !== idField));
  const handlers: Record<string, (input: Input, ctx: { principal: Parameters<DatabaseServices['one']>[0] }) => Promise<unknown>> = {
    create: (input, { principal }) => databases.create(principal, engine, input as never),
    one: (input, { principal }) => databases.one(principal, engine, id(input)),
    update: (input, { principal }) => databases.update(principal, engine, id(input), fields(input)),
    saveEnvironment: (input, { principal }) => databases.update(principal, engine, id(input), { env: input.env }),
    changeStatus: (input, { principal }) => databases.update(principal, engine, id(input), { applicationStatus: input.applicationStatus }),
    move: (input, { principal }) => databases.move(principal, engine, id(input), String(input.targetEnvironmentId)),
    saveExternalPort: (input, { principal }) => lifecycle.saveExternalPort(principal, engine, id(input), input.externalPort as number | null),
    remove: (input, { principal }) => lifecycle.remove(principal, engine, id(input), input.deleteVolume !== false),
    deploy: (input, { principal }) => lifecycle.deploy(principal, engine, id(input)),
    rebuild: (input, { principal }) => lifecycle.rebuild(principal, engine, id(input)),
    start: (input, { principal }) => lifecycle.start(principal, engine, id(input)),
    stop: (input, { principal }) => lifecycle.stop(principal, engine, id(input)),
    reload: (input, { principal }) => lifecycle.reload(principal, engine, id(input), String(input.appName)),
  };
  return handlers as unknown as RouterHandlers<R>;
}
