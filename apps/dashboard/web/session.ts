/**
 * The API keys of this tab. Kept in sessionStorage: they survive a reload of the tab and end
 * with it; never in localStorage, so a key does not outlive the session on a shared machine.
 * `signedIn` is the key typed at sign-in; `byOrganization` holds keys minted for the other
 * organizations the user switched to (short-lived: see switchOrganization in app-state.ts).
 */
export interface Session {
  key: string;
  organizationId: string;
  signedIn: { key: string; organizationId: string };
  minted: Record<string, { key: string; apiKeyId: string }>;
}

const ITEM = 'skiff.session';

export function loadSession(): Session | null {
  try {
    const text = sessionStorage.getItem(ITEM);
    return text ? (JSON.parse(text) as Session) : null;
  } catch {
    return null;
  }
}

export function saveSession(s: Session | null): void {
  if (s) sessionStorage.setItem(ITEM, JSON.stringify(s));
  else sessionStorage.removeItem(ITEM);
}
