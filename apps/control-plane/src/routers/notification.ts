import type { RouterHandlers } from '../http/context.js';
import type { EventService } from '../services/events/index.js';
import type { ChannelTests, NotificationService } from '../services/notifications/index.js';

export const notificationHandlers = (events: EventService, notifications: NotificationService, tests: ChannelTests): RouterHandlers<'notification'> => ({
  receiveNotification: (input) => events.receiveThreshold(input),
  deliveries: (input, { principal }) => events.deliveries(principal, input),
  createHook: (input, { principal }) => notifications.create(principal, 'hook', input),
  createMessenger: (input, { principal }) => notifications.create(principal, 'messenger', input),
  createCommunity: (input, { principal }) => notifications.create(principal, 'community', input),
  createEmail: (input, { principal }) => notifications.create(principal, 'email', input),
  createPush: (input, { principal }) => notifications.create(principal, 'push', input),
  updateHook: (input, { principal }) => notifications.update(principal, 'hook', input),
  updateMessenger: (input, { principal }) => notifications.update(principal, 'messenger', input),
  updateCommunity: (input, { principal }) => notifications.update(principal, 'community', input),
  updateEmail: (input, { principal }) => notifications.update(principal, 'email', input),
  updatePush: (input, { principal }) => notifications.update(principal, 'push', input),
  one: (input, { principal }) => notifications.one(principal, input.notificationId),
  all: (_input, { principal }) => notifications.all(principal),
  remove: (input, { principal }) => notifications.remove(principal, input.notificationId),
  testHookConnection: (input) => tests.test('hook', input),
  testMessengerConnection: (input) => tests.test('messenger', input),
  testCommunityConnection: (input) => tests.test('community', input),
  testEmailConnection: (input) => tests.test('email', input),
});
