import type { z } from 'zod';

export type Method = 'GET' | 'POST';

/** Member flags of `user.assignPermissions`; owners and admins hold all of them. */
export type Grant =
  | 'canCreateProjects'
  | 'canCreateServices'
  | 'canDeleteProjects'
  | 'canDeleteServices'
  | 'canAccessToContainer'
  | 'canAccessToProxyFiles'
  | 'canAccessToAPI'
  | 'canAccessToSSHKeys'
  | 'canAccessToGitProviders'
  | 'canDeleteEnvironments'
  | 'canCreateEnvironments';

/**
 * Who may call an operation, checked before its handler runs. Resource-level rules (which
 * project, environment or service a member may touch) live in the control plane's policy.
 * - `role`: the lowest organization role required (member < admin < owner).
 * - `grant`: for members, the flag they must hold (owners and admins always pass).
 * - `auth`: `key` (an API key, the default) or `bodyToken` (the body carries its own token,
 *   for senders that hold no API key).
 */
export interface Access {
  role?: 'member' | 'admin' | 'owner';
  grant?: Grant;
  auth?: 'key' | 'bodyToken';
}

/**
 * A file sent along with the input: the request is `multipart/form-data`, the input's fields
 * are its text parts and the file is the part named `field`. The server streams it to disk
 * (size-limited) and hands the handler where it is; it never reaches the input schema.
 */
export interface Upload {
  field: string;
  description: string;
}

export interface ContractSpec<I extends z.ZodObject, O extends z.ZodType> {
  method: Method;
  summary: string;
  /** Extra documentation for the OpenAPI document (choices made where the spec is silent). */
  description?: string;
  input: I;
  output: O;
  access?: Access;
  /** A valid input, used by the documentation and the contract-driven tests. */
  example: z.input<I>;
  /** True for operations beyond the spec's lists. */
  extension?: boolean;
  /** The operation takes a file (multipart/form-data); POST only. */
  upload?: Upload;
}

export interface Contract<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType>
  extends ContractSpec<I, O> {
  /** `<router>.<operation>`, filled in by `defineRouter`. */
  name: string;
  router: string;
  operation: string;
  access: Required<Pick<Access, 'role' | 'auth'>> & Pick<Access, 'grant'>;
}

export function defineContract<I extends z.ZodObject, O extends z.ZodType>(
  spec: ContractSpec<I, O>,
): Contract<I, O> {
  return {
    ...spec,
    name: '',
    router: '',
    operation: '',
    access: { role: 'member', auth: 'key', ...spec.access },
  };
}

export function defineRouter<R extends string, T extends Record<string, Contract<any, any>>>(
  router: R,
  operations: T,
): T {
  for (const [operation, contract] of Object.entries(operations)) {
    contract.router = router;
    contract.operation = operation;
    contract.name = `${router}.${operation}`;
  }
  return operations;
}

export type InputOf<C> = C extends Contract<infer I, any> ? z.output<I> : never;
export type OutputOf<C> = C extends Contract<any, infer O> ? z.input<O> : never;
