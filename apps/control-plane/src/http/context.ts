import type { Contracts, InputOf, OutputOf, RouterName } from '@skiff/contracts';
import type { Logger } from 'pino';
import type { Principal } from '../authz/principal.js';
import type { UploadedFile } from '../services/deployments/index.js';

export interface RequestContext {
  /**
   * The caller. Operations authenticated by a token in their body (`bodyToken`) get one only
   * when the request also presents an API key (checked like any other), else none (null).
   */
  principal: Principal;
  requestId: string;
  log: Logger;
  /** The file of an operation that takes one (`contract.upload`); removed after the handler unless moved. */
  upload?: UploadedFile;
}

export type Handler<C> = (input: InputOf<C>, ctx: RequestContext) => Promise<OutputOf<C>>;

/** The handlers of one router, typed by its contracts; a missing one answers NOT_IMPLEMENTED. */
export type RouterHandlers<R extends RouterName> = {
  [O in keyof Contracts[R]]?: Handler<Contracts[R][O]>;
};

export type AllHandlers = { [R in RouterName]?: RouterHandlers<R> };
