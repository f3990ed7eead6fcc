import { type Api, ok } from './api.js';

/** Who the key acts as: role and can* permissions (`user.get`), and whether they administer the platform host. */
export interface Me {
  userId: string;
  role: string;
  permissions: Record<string, unknown>;
  root: boolean;
}

export async function loadMe(api: Api): Promise<Me> {
  const [user, root] = await Promise.all([
    ok(api.GET('/api/user.get')),
    ok(api.GET('/api/user.haveRootAccess')).catch(() => ({ haveRootAccess: false })),
  ]);
  return { userId: user.userId, role: user.role, permissions: user.permissions, root: root.haveRootAccess };
}

/** Owners and admins hold every right whatever is stored (user.assignPermissions). */
export const isAdmin = (me: Me) => me.role === 'owner' || me.role === 'admin';
export const may = (me: Me, grant: string) => isAdmin(me) || me.permissions[grant] === true;
