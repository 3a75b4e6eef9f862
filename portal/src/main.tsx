import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText, setCsrfToken, setUnauthorizedHandler, type Session } from './api.js';
import { KeysPage } from './pages/keys.js';
import { LookupPage } from './pages/lookup.js';
import { ScorersPage } from './pages/scorers.js';
import { SignInPage } from './pages/sign-in.js';
import { UsagePage } from './pages/usage.js';
import { WebhooksPage } from './pages/webhooks.js';
import './styles.css';

const pages = [
  { path: 'scorers', title: 'Scorers', Page: ScorersPage },
  { path: 'keys', title: 'API keys', Page: KeysPage },
  { path: 'webhooks', title: 'Webhooks', Page: WebhooksPage },
  { path: 'usage', title: 'Usage', Page: UsagePage },
  { path: 'lookup', title: 'Address lookup', Page: LookupPage },
] as const;

const currentPath = () => location.hash.replace(/^#\/?/, '') || 'scorers';

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [path, setPath] = useState(currentPath());
  const [problem, setProblem] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    const onHash = () => setPath(currentPath());
    addEventListener('hashchange', onHash);
    setUnauthorizedHandler(() => {
      setCsrfToken(null);
      setSession(null);
    });
    api<Session>('GET', '/v2/account/session').then(signedIn, () => setSession(null));
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const navigated = useRef(false);
  // After a page change (not on first load, where the skip link comes first), focus moves to the
  // new page's heading, so keyboard and screen-reader users land on it.
  useEffect(() => {
    if (session === undefined) return;
    if (navigated.current) heading.current?.focus();
    navigated.current = true;
  }, [path, session]);

  function signedIn(next: Session) {
    setCsrfToken(next.csrf_token);
    setSession(next);
  }

  async function signOut() {
    try {
      await api('DELETE', '/v2/account/session');
    } catch (error) {
      setProblem(errorText(error));
    }
    setCsrfToken(null);
    setSession(null);
  }

  if (session === undefined) return <p class="loading">Loading…</p>;
  const page = pages.find((candidate) => candidate.path === path) ?? pages[0];
  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <span class="brand">Stampgate developer portal</span>
        {session && (
          <div class="who">
            <span class="address" title={session.address}>{`${session.address.slice(0, 6)}…${session.address.slice(-4)}`}</span>
            <button type="button" class="secondary" onClick={signOut}>Sign out</button>
          </div>
        )}
      </header>
      {session && (
        <nav aria-label="Portal sections">
          <ul>
            {pages.map((candidate) => (
              <li key={candidate.path}>
                <a href={`#/${candidate.path}`} aria-current={candidate === page ? 'page' : undefined}>{candidate.title}</a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <main id="main">
        {problem && <p role="alert" class="error">{problem}</p>}
        {session ? (
          <>
            <h1 tabIndex={-1} ref={heading}>{page.title}</h1>
            <page.Page key={page.path} />
          </>
        ) : (
          <>
            <h1 tabIndex={-1} ref={heading}>Sign in</h1>
            <SignInPage onSignedIn={signedIn} />
          </>
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
