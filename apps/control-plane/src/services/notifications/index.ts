// Notification channels.
// What routers and the composition root use; services import each other's files directly.
export { NotificationService } from './notifications.js';
export { ChannelTests } from './channel-tests.js';
export { type ChannelOptions, channelSenders, smtpLimits } from './channels/index.js';
