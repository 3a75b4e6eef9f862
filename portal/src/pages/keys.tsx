import { useEffect, useState } from 'preact/hooks';
import { api, type ApiKey, errorText, permissionNames } from '../api.js';

const defaults = ['submit_passports', 'read_scores', 'create_scorers'];

export function KeysPage() {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [label, setLabel] = useState('');
  const [permissions, setPermissions] = useState<string[]>(defaults);
  const [created, setCreated] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const load = () => api<{ items: ApiKey[] }>('GET', '/v2/account/keys').then((r) => setKeys(r.items), (e) => setProblem(errorText(e)));
  useEffect(() => void load(), []);

  async function create(event: Event) {
    event.preventDefault();
    setProblem(null);
    try {
      const result = await api<ApiKey & { key: string }>('POST', '/v2/account/keys', { name: label, permissions });
      setCreated(result.key);
      setStatus(`Created key ${result.prefix}. Copy it now: it is shown only once.`);
      setLabel('');
      await load();
    } catch (error) {
      setProblem(errorText(error));
    }
  }

  async function copy() {
    if (created === null) return;
    try {
      await navigator.clipboard.writeText(created);
      setStatus('Key copied to the clipboard.');
    } catch {
      setStatus('Copying was not allowed: select the key and copy it by hand.');
    }
  }

  async function revoke(prefix: string) {
    setProblem(null);
    try {
      await api('DELETE', `/v2/account/keys/${prefix}`);
      setStatus(`Key ${prefix} revoked.`);
      setConfirming(null);
      await load();
    } catch (error) {
      setProblem(errorText(error));
    }
  }

  const toggle = (name: string, on: boolean) => setPermissions(on ? [...permissions, name] : permissions.filter((p) => p !== name));

  return (
    <>
      <p role="status" class="status">{status}</p>
      {problem && <p role="alert" class="error">{problem}</p>}
      {created !== null && (
        <section class="card secret" aria-labelledby="new-key-title">
          <h2 id="new-key-title">Your new API key</h2>
          <p>This is the only time the key is shown. Store it somewhere safe.</p>
          <label>API key<input readOnly value={created} id="new-key" onFocus={(e) => e.currentTarget.select()} /></label>
          <div class="actions">
            <button type="button" onClick={copy}>Copy key</button>
            <button type="button" class="secondary" onClick={() => setCreated(null)}>Done</button>
          </div>
        </section>
      )}
      <form class="card" onSubmit={create} aria-labelledby="key-form-title">
        <h2 id="key-form-title">New API key</h2>
        <label>Label<input required maxLength={200} value={label} onInput={(e) => setLabel(e.currentTarget.value)} /></label>
        <fieldset>
          <legend>Permissions</legend>
          {permissionNames.map((name) => (
            <label class="check" key={name}>
              <input type="checkbox" checked={permissions.includes(name)} onChange={(e) => toggle(name, e.currentTarget.checked)} />
              {name}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create key</button>
      </form>
      <div class="table-wrap">
        <table>
          <caption>Your API keys</caption>
          <thead><tr><th scope="col">Prefix</th><th scope="col">Label</th><th scope="col">Tier</th><th scope="col">Permissions</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {keys.length === 0 && <tr><td colSpan={6}>No keys yet.</td></tr>}
            {keys.map((key) => (
              <tr key={key.prefix}>
                <td><code>{key.prefix}</code></td>
                <td>{key.name}</td>
                <td>{key.tier}</td>
                <td>{key.permissions.join(', ')}</td>
                <td>{key.revoked_at ? 'revoked' : 'active'}</td>
                <td>
                  {key.revoked_at === null && (confirming === key.prefix ? (
                    <>
                      <button type="button" class="danger" onClick={() => revoke(key.prefix)}>Confirm revoke</button>
                      <button type="button" class="secondary" onClick={() => setConfirming(null)}>Keep</button>
                    </>
                  ) : (
                    <button type="button" class="secondary" aria-label={`Revoke key ${key.prefix}`} onClick={() => setConfirming(key.prefix)}>Revoke</button>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
