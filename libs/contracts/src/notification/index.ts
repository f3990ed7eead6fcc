import { defineRouter } from '../contract.js';
import { all } from './all.js';
import { createCommunity } from './createCommunity.js';
import { createEmail } from './createEmail.js';
import { createHook } from './createHook.js';
import { createMessenger } from './createMessenger.js';
import { createPush } from './createPush.js';
import { deliveries } from './deliveries.js';
import { one } from './one.js';
import { receiveNotification } from './receiveNotification.js';
import { remove } from './remove.js';
import { testCommunityConnection } from './testCommunityConnection.js';
import { testEmailConnection } from './testEmailConnection.js';
import { testHookConnection } from './testHookConnection.js';
import { testMessengerConnection } from './testMessengerConnection.js';
import { updateCommunity } from './updateCommunity.js';
import { updateEmail } from './updateEmail.js';
import { updateHook } from './updateHook.js';
import { updateMessenger } from './updateMessenger.js';
import { updatePush } from './updatePush.js';

export const notification = defineRouter('notification', {
  createHook,
  updateHook,
  testHookConnection,
  createMessenger,
  updateMessenger,
  testMessengerConnection,
  createCommunity,
  updateCommunity,
  testCommunityConnection,
  createEmail,
  updateEmail,
  testEmailConnection,
  remove,
  one,
  all,
  receiveNotification,
  createPush,
  updatePush,
  deliveries,
});
