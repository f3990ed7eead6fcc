import { z } from 'zod';
import { Email, Uri } from '../primitives.js';

/** An http(s) URL a channel posts to; it carries the channel's secret, so it is write-only. */
export const WebhookUrl = Uri.describe('http(s) URL; write-only (responses show hasWebhookUrl)');
/** The base URL of a push server. */
export const ServerUrl = Uri.describe('http(s) base URL of the push server');
export const SmtpPort = z.number().int().min(1).max(65535);
export const Priority = z.number().int().min(1).max(10).describe('1 (lowest) to 10 (highest)');
export const FromAddress = Email;
export const ToAddresses = z.array(Email).min(1);

/** `organizationId` of update operations: when given, it must be the caller's organization. */
export const OrganizationOfCaller = z
  .string()
  .optional()
  .describe("when given, must be the API key's organization");

export const UPDATE_NOTE =
  'Only the fields given change. The notification and its channel id must belong together, ' +
  'in the caller\'s organization: an unknown notification is NOT_FOUND, a channel id of another ' +
  'notification or kind is BAD_REQUEST naming that field.';
