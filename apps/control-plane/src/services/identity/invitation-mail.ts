/**
 * `user.sendInvitation`: the invitation goes by email to the invited address only, through an
 * email channel of the organization or the operator's SMTP (`notificationId: "platform"`).
 * Sending issues a new token, carried by the email alone: the one `inviteMember` answered no
 * longer works, so whoever relayed it (or read it) cannot accept in the invitee's place.
 */
import { hashToken, newInvitationToken } from '../../crypto/tokens.js';
import type { Principal } from '../../authz/principal.js';
import { Invalid } from '../../errors.js';
import { DeliveryError, type Mail, sendSmtp, type SmtpServer } from '../notifications/channels/index.js';
import type { SmtpLimits } from '../notifications/channels/email.js';
import { escapeHtml } from '../notifications/channels/messenger.js';
import type { ServiceDeps } from '../shared/deps.js';
import { findOfOrganization } from '../shared/organization-records.js';

/** `notificationId` naming the operator's SMTP (`SKIFF_SMTP_URL`) rather than a channel. */
export const PLATFORM_SMTP = 'platform';

export interface PlatformSmtp {
  server: SmtpServer;
  /** `SKIFF_SMTP_FROM`. */
  from: string;
}

export class InvitationMailer {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly options: {
      /** The limits of the organizations' email channels (their policy: `SKIFF_OUTBOUND_ALLOW_PRIVATE`). */
      channels: SmtpLimits;
      platform?: PlatformSmtp;
    },
  ) {}

  async send(p: Principal, invitationId: string, notificationId: string): Promise<Record<string, never>> {
    const db = this.deps.db;
    const invitation = await db
      .selectFrom('invitations as i')
      .innerJoin('organizations as o', 'o.id', 'i.organizationId')
      .selectAll('i')
      .select('o.name as organizationName')
      .where('i.id', '=', invitationId)
      .where('i.organizationId', '=', p.organizationId)
      .executeTakeFirst();
    if (!invitation || invitation.status !== 'pending' || invitation.expiresAt.getTime() <= this.deps.clock().getTime()) {
      throw Invalid('invitationId', 'no pending invitation with this id in the organization');
    }
    const { server, from, limits } = await this.route(p, notificationId);
    const token = newInvitationToken();
    try {
      await sendSmtp(server, { from, to: [invitation.email], ...(await this.invitationMail(invitation.organizationName, invitation.role, token, invitation.expiresAt)) }, limits);
    } catch (error) {
      if (!(error instanceof DeliveryError)) throw error;
      const field = error.details.field === 'toAddresses' ? 'invitationId' : 'notificationId';
      throw Invalid(field, `the invitation email was not sent: ${error.message}`);
    }
    // Only now: a failed send leaves the earlier token working.
    await db
      .updateTable('invitations')
      .set({ tokenHash: hashToken(token) })
      .where('id', '=', invitation.id)
      .where('status', '=', 'pending')
      .execute();
    return {};
  }

  /** The SMTP server, sender and limits that `notificationId` names. */
  private async route(p: Principal, notificationId: string): Promise<{ server: SmtpServer; from: string; limits: SmtpLimits }> {
    if (notificationId === PLATFORM_SMTP) {
      const platform = this.options.platform;
      if (!platform) {
        throw Invalid('notificationId', 'the platform has no SMTP server: name an email channel (notification.createEmail), or have the operator set SKIFF_SMTP_URL and SKIFF_SMTP_FROM');
      }
      // The operator named that server: it may be on a private network, never link-local or metadata.
      return { server: platform.server, from: platform.from, limits: { ...this.options.channels, policy: { allowPrivate: true } } };
    }
    const row = await findOfOrganization(this.deps.db, 'notifications', p, notificationId, 'notification');
    if (row.kind !== 'email') {
      throw Invalid('notificationId', `is a ${row.kind} channel: invitations go by email (an email channel, or "${PLATFORM_SMTP}" for the operator's SMTP)`);
    }
    const secrets = JSON.parse(this.deps.secrets.open(row.secrets)) as { password?: string };
    const c = row.config as { smtpServer: string; smtpPort: number; username?: string; fromAddress: string };
    return {
      server: { host: c.smtpServer, port: Number(c.smtpPort), username: c.username || undefined, password: secrets.password },
      from: c.fromAddress,
      limits: this.options.channels,
    };
  }

  private async invitationMail(organizationName: string, role: string, token: string, expiresAt: Date): Promise<Pick<Mail, 'subject' | 'text' | 'html'>> {
    const settings = await this.deps.db.selectFrom('platformSettings').select(['host', 'https']).where('id', '=', 'platform').executeTakeFirst();
    const endpoint = settings?.host ? `${settings.https ? 'https' : 'http'}://${settings.host}/api/organization.acceptInvitation` : 'organization.acceptInvitation';
    const how = `Accept it with POST ${endpoint} and the JSON body {"token": "${token}", "name": "<your name>"}; with an account already on this platform, send your own API key too. The invitation expires at ${expiresAt.toISOString()}.`;
    const subject = `Invitation to join ${organizationName} on Skiff`;
    return {
      subject,
      text: `You are invited to join the organization ${organizationName} on Skiff as ${role}.\n\nYour invitation token: ${token}\n\n${how}\n`,
      html:
        `<!doctype html><html><body><p>You are invited to join the organization <b>${escapeHtml(organizationName)}</b> on Skiff as ${escapeHtml(role)}.</p>` +
        `<p>Your invitation token: <code>${token}</code></p><p>${escapeHtml(how)}</p></body></html>`,
    };
  }
}
