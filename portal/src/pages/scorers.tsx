import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Scorer } from '../api.js';

interface ScorerType {
  name: string;
  description: string;
}

interface Draft {
  name: string;
  type: string;
  threshold: string;
  requiresSignature: boolean;
  weights: { provider: string; weight: string }[];
}

const emptyDraft: Draft = { name: '', type: 'weighted', threshold: '20', requiresSignature: false, weights: [] };

function draftOf(scorer: Scorer): Draft {
  return {
    name: scorer.name,
    type: scorer.type,
    threshold: scorer.threshold,
    requiresSignature: scorer.requires_signature,
    weights: Object.entries(scorer.weights).map(([provider, weight]) => ({ provider, weight })),
  };
}

export function ScorersPage() {
  const [scorers, setScorers] = useState<Scorer[]>([]);
  const [types, setTypes] = useState<ScorerType[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [status, setStatus] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const load = () => api<{ items: Scorer[] }>('GET', '/v2/account/scorers').then((r) => setScorers(r.items), (e) => setProblem(errorText(e)));
  useEffect(() => {
    void load();
    api<{ items: ScorerType[] }>('GET', '/v2/account/scorer-types').then((r) => setTypes(r.items), (e) => setProblem(errorText(e)));
  }, []);

  const update = (changes: Partial<Draft>) => setDraft({ ...draft, ...changes });
  const setWeight = (index: number, changes: Partial<Draft['weights'][number]>) =>
    update({ weights: draft.weights.map((row, i) => (i === index ? { ...row, ...changes } : row)) });

  async function save(event: Event) {
    event.preventDefault();
    setProblem(null);
    const body = {
      name: draft.name,
      type: draft.type,
      threshold: draft.threshold,
      requires_signature: draft.requiresSignature,
      weights: Object.fromEntries(draft.weights.filter((row) => row.provider.trim() !== '').map((row) => [row.provider.trim(), row.weight.trim()])),
    };
    try {
      const saved = editing
        ? await api<Scorer>('PATCH', `/v2/account/scorers/${editing}`, body)
        : await api<Scorer>('POST', '/v2/account/scorers', body);
      setStatus(`${editing ? 'Saved' : 'Created'} scorer ${saved.id} (${saved.name}).`);
      setEditing(null);
      setDraft(emptyDraft);
      await load();
    } catch (error) {
      setProblem(errorText(error));
    }
  }

  return (
    <>
      <p role="status" class="status">{status}</p>
      {problem && <p role="alert" class="error">{problem}</p>}
      <div class="table-wrap">
        <table>
          <caption>Your scorers</caption>
          <thead><tr><th scope="col">ID</th><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Threshold</th><th scope="col">Overrides</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {scorers.length === 0 && <tr><td colSpan={6}>No scorers yet: create one below.</td></tr>}
            {scorers.map((scorer) => (
              <tr key={scorer.id}>
                <td>{scorer.id}</td>
                <td>{scorer.name}</td>
                <td>{scorer.type}</td>
                <td>{scorer.threshold}</td>
                <td>{Object.keys(scorer.weights).length}</td>
                <td><button type="button" class="secondary" aria-label={`Edit scorer ${scorer.name}`} onClick={() => { setEditing(scorer.id); setDraft(draftOf(scorer)); }}>Edit</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <form class="card" onSubmit={save} aria-labelledby="scorer-form-title">
        <h2 id="scorer-form-title">{editing ? `Edit scorer ${editing}` : 'New scorer'}</h2>
        <label>Name<input required maxLength={200} value={draft.name} onInput={(e) => update({ name: e.currentTarget.value })} /></label>
        <label>
          Type
          <select value={draft.type} onChange={(e) => update({ type: e.currentTarget.value })}>
            {(types.length > 0 ? types : [{ name: 'weighted', description: '' }]).map((type) => <option key={type.name} value={type.name}>{type.name}</option>)}
          </select>
        </label>
        <p class="hint">{types.find((type) => type.name === draft.type)?.description}</p>
        <label>Threshold<input required inputMode="decimal" pattern="\d{1,12}(\.\d{1,5})?" value={draft.threshold} onInput={(e) => update({ threshold: e.currentTarget.value })} /></label>
        <label class="check"><input type="checkbox" checked={draft.requiresSignature} onChange={(e) => update({ requiresSignature: e.currentTarget.checked })} />Submissions must be signed by the wallet</label>
        <fieldset>
          <legend>Weight overrides</legend>
          {draft.weights.length === 0 && <p class="hint">Every provider counts with the catalogue's weight.</p>}
          {draft.weights.map((row, index) => (
            <div class="row" key={index}>
              <label>Provider<input required value={row.provider} onInput={(e) => setWeight(index, { provider: e.currentTarget.value })} /></label>
              <label>Weight<input required inputMode="decimal" pattern="\d{1,12}(\.\d{1,5})?" value={row.weight} onInput={(e) => setWeight(index, { weight: e.currentTarget.value })} /></label>
              <button type="button" class="secondary" aria-label={`Remove override ${index + 1}`} onClick={() => update({ weights: draft.weights.filter((_, i) => i !== index) })}>Remove</button>
            </div>
          ))}
          <button type="button" class="secondary" onClick={() => update({ weights: [...draft.weights, { provider: '', weight: '' }] })}>Add override</button>
        </fieldset>
        <div class="actions">
          <button type="submit">{editing ? 'Save scorer' : 'Create scorer'}</button>
          {editing && <button type="button" class="secondary" onClick={() => { setEditing(null); setDraft(emptyDraft); }}>Cancel</button>}
        </div>
      </form>
    </>
  );
}
