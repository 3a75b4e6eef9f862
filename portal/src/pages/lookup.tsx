import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText, type Scorer } from '../api.js';
import { lookUpOnchain, type OnchainLookup, OnchainScores } from '../onchain-scores.js';

/** The v2 score of an address (GET /v2/stamps/{scorer_id}/score/{address}). */
interface V2Score {
  address: string;
  score: string;
  passing_score: boolean;
  threshold: string;
  last_score_timestamp: string;
  expiration_timestamp: string | null;
  error: string | null;
  stamps: Record<string, { score: string; dedup: boolean; expiration_date: string }>;
}

export function LookupPage() {
  const [scorers, setScorers] = useState<Scorer[]>([]);
  const [scorer, setScorer] = useState('');
  const [address, setAddress] = useState('');
  const [result, setResult] = useState<V2Score | null>(null);
  const [onchain, setOnchain] = useState<OnchainLookup | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  // Which lookup is current, so that a slow chain read of an earlier one never lands on a later one.
  const lookups = useRef(0);

  useEffect(() => {
    api<{ items: Scorer[] }>('GET', '/v2/account/scorers').then((r) => {
      setScorers(r.items);
      setScorer(r.items[0]?.id ?? '');
    }, (e) => setProblem(errorText(e)));
  }, []);

  async function lookUp(event: Event) {
    event.preventDefault();
    setProblem(null);
    setResult(null);
    setOnchain(null);
    setBusy(true);
    const target = address.trim().toLowerCase();
    const lookup = ++lookups.current;
    // The chains are read meanwhile (a slow chain waits up to OUTBOUND_TIMEOUT_MS); the stored score
    // shows as soon as it is there, and a chain's failure stays in its own row.
    const chains = lookUpOnchain(scorer, target);
    try {
      // Scores the address now from its stored stamps, as an integrator's v2 read does.
      setResult(await api<V2Score>('GET', `/v2/stamps/${scorer}/score/${target}`));
    } catch (error) {
      setProblem(errorText(error));
    } finally {
      setBusy(false);
    }
    const read = await chains;
    if (lookup === lookups.current) setOnchain(read);
  }

  const stamps = result ? Object.entries(result.stamps) : [];
  return (
    <>
      {problem && <p role="alert" class="error">{problem}</p>}
      <form class="card" onSubmit={lookUp} aria-label="Look up an address">
        <label>
          Scorer
          <select value={scorer} onChange={(e) => setScorer(e.currentTarget.value)} required>
            {scorers.map((s) => <option key={s.id} value={s.id}>{`${s.name} (${s.id})`}</option>)}
          </select>
        </label>
        <label>Address<input required pattern="0[xX][0-9a-fA-F]{40}" placeholder="0x…" value={address} onInput={(e) => setAddress(e.currentTarget.value)} spellcheck={false} autoComplete="off" /></label>
        <button type="submit" disabled={scorer === '' || busy}>{busy ? 'Scoring…' : 'Look up'}</button>
      </form>
      <section aria-live="polite">
        {result && (
          <dl class="card facts">
            <dt>Score</dt><dd data-testid="score">{result.score}</dd>
            <dt>Passing</dt><dd data-testid="passing">{result.passing_score ? `yes (threshold ${result.threshold})` : `no (threshold ${result.threshold})`}</dd>
            <dt>Scored</dt><dd>{result.last_score_timestamp}</dd>
            <dt>Expires</dt><dd>{result.expiration_timestamp ?? '—'}</dd>
            {result.error && (<><dt>Error</dt><dd>{result.error}</dd></>)}
          </dl>
        )}
        {result && (onchain ? <OnchainScores lookup={onchain} /> : <p class="hint">Reading the chains…</p>)}
        {result && (
          <div class="table-wrap">
            <table>
              <caption>{`Stamps (${stamps.length})`}</caption>
              <thead><tr><th scope="col">Provider</th><th scope="col">Weight in this score</th><th scope="col">Expires</th></tr></thead>
              <tbody>
                {stamps.length === 0 && <tr><td colSpan={3}>No valid stamps.</td></tr>}
                {stamps.map(([provider, stamp]) => (
                  <tr key={provider}>
                    <td>{provider}</td>
                    <td>{stamp.dedup ? `${stamp.score} (deduplicated)` : stamp.score}</td>
                    <td>{stamp.expiration_date}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
