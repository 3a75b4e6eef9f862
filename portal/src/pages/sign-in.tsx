import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Session } from '../api.js';
import { signInWithWallet } from '../siwe.js';

interface DevWalletInfo {
  available: boolean;
  address: string | null;
}

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [devWallet, setDevWallet] = useState<DevWalletInfo | null>(null);

  useEffect(() => {
    // Offered by development servers only (STAMPGATE_ENV=development).
    api<DevWalletInfo>('GET', '/v2/account/dev-wallet').then(setDevWallet, () => setDevWallet(null));
  }, []);

  async function signIn(how: () => Promise<Session>) {
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await how());
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
      <button type="button" onClick={() => signIn(signInWithWallet)} disabled={busy}>{busy ? 'Waiting for the wallet…' : 'Sign in with Ethereum'}</button>
      {devWallet?.available && (
        <div class="dev-wallet" role="note">
          <p>
            <strong>Development server.</strong> No wallet extension? Sign in with this server's <strong>development test wallet</strong>{' '}
            <code>{devWallet.address}</code>: a throw-away key kept in the server's DATA_DIR. Production servers do not offer it.
          </p>
          <button type="button" class="secondary" onClick={() => signIn(() => api<Session>('POST', '/v2/account/dev-wallet/session'))} disabled={busy}>
            Sign in with the development test wallet
          </button>
        </div>
      )}
      {problem && <p role="alert" class="error">{problem}</p>}
    </section>
  );
}
