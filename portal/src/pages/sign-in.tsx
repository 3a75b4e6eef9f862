import { useState } from 'preact/hooks';
import { errorText, type Session } from '../api.js';
import { signInWithWallet } from '../siwe.js';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  async function signIn() {
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await signInWithWallet());
    } catch (error) {
      setProblem(errorText(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="card narrow">
      <p>
        Sign in with your Ethereum wallet (an externally owned account or a smart wallet). Your wallet shows a
        Sign-In with Ethereum message for this site; signing it costs nothing and sends no transaction.
      </p>
      <p>Unless this server hands accounts out itself, the first sign-in of a wallet creates its account: its scorers, API keys and webhooks belong to that wallet.</p>
      <button type="button" onClick={signIn} disabled={busy}>{busy ? 'Waiting for the wallet…' : 'Sign in with Ethereum'}</button>
      {problem && <p role="alert" class="error">{problem}</p>}
    </section>
  );
}
