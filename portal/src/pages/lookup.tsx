import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, errorText, type Scorer } from '../api.js';

interface ScoreRecord {
  address: string;
  score: string | null;
  status: string;
  last_score_timestamp: string;
  evidence: unknown;
  error: string | null;
  stamp_scores?: Record<string, string>;
}

interface StampList {
  items: { credential: { credentialSubject?: { provider?: string }; expirationDate?: string } }[];
}

export function LookupPage() {
  const [scorers, setScorers] = useState<Scorer[]>([]);
  const [scorer, setScorer] = useState('');
  const [address, setAddress] = useState('');
  const [score, setScore] = useState<ScoreRecord | null>(null);
  const [stamps, setStamps] = useState<StampList['items'] | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    api<{ items: Scorer[] }>('GET', '/v2/account/scorers').then((r) => {
      setScorers(r.items);
      setScorer(r.items[0]?.id ?? '');
    }, (e) => setProblem(errorText(e)));
  }, []);

  async function lookUp(event: Event) {
    event.preventDefault();
    setProblem(null);
    setNote(null);
    setScore(null);
    setStamps(null);
    const target = address.trim().toLowerCase();
    try {
      setStamps((await api<StampList>('GET', `/registry/stamps/${target}?limit=100`)).items);
      try {
        setScore(await api<ScoreRecord>('GET', `/registry/score/${scorer}/${target}`));
      } catch (error) {
        if (error instanceof ApiError && error.code === 'not_submitted') setNote('This address has not been submitted to this scorer yet.');
        else throw error;
      }
    } catch (error) {
      setProblem(errorText(error));
    }
  }

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
        <button type="submit" disabled={scorer === ''}>Look up</button>
      </form>
      <section aria-live="polite">
        {note && <p>{note}</p>}
        {score && (
          <dl class="card facts">
            <dt>Status</dt><dd data-testid="status">{score.status}</dd>
            <dt>Score</dt><dd data-testid="score">{score.score ?? '—'}</dd>
            <dt>Last scored</dt><dd>{score.last_score_timestamp}</dd>
            {score.error && (<><dt>Error</dt><dd>{score.error}</dd></>)}
          </dl>
        )}
        {stamps && (
          <div class="table-wrap">
            <table>
              <caption>{`Stamps (${stamps.length})`}</caption>
              <thead><tr><th scope="col">Provider</th><th scope="col">Expires</th><th scope="col">Weight in this score</th></tr></thead>
              <tbody>
                {stamps.length === 0 && <tr><td colSpan={3}>No stamps.</td></tr>}
                {stamps.map((stamp, i) => {
                  const provider = stamp.credential.credentialSubject?.provider ?? '?';
                  return <tr key={i}><td>{provider}</td><td>{stamp.credential.expirationDate ?? ''}</td><td>{score?.stamp_scores?.[provider] ?? '—'}</td></tr>;
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
