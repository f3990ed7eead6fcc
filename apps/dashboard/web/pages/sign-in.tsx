import { useState } from 'preact/hooks';
import { apiFor, messageOf, ok } from '../api.js';
import type { Session } from '../session.js';

/** Signs in with an API key: it is checked with `user.get`, which also names its organization. */
export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const me = await ok(apiFor(key.trim()).GET('/api/user.get'));
      const signedIn = { key: key.trim(), organizationId: me.organizationId };
      onSignedIn({ ...signedIn, signedIn, minted: {} });
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1 tabIndex={-1}>Sign in to Skiff</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autoComplete="off" required value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)} aria-describedby="api-key-help" />
        <p id="api-key-help" class="hint">tools/up prints the first key; <code>user.createApiKey</code> makes more. It is kept for this browser tab only.</p>
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
    </main>
  );
}
