import { defineRouter } from '../contract.js';
import { acceptInvitation } from './acceptInvitation.js';
import { all } from './all.js';
import { allInvitations } from './allInvitations.js';
import { create } from './create.js';
import { delete_ } from './delete.js';
import { inviteMember } from './inviteMember.js';
import { one } from './one.js';
import { removeInvitation } from './removeInvitation.js';
import { setDefault } from './setDefault.js';
import { update } from './update.js';

export const organization = defineRouter('organization', {
  create,
  all,
  one,
  update,
  delete: delete_,
  allInvitations,
  removeInvitation,
  setDefault,
  inviteMember,
  acceptInvitation,
});
