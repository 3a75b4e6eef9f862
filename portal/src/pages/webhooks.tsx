import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, errorText, type Scorer } from '../api.js';

interface Webhook {
  id: number;
  url: string;
  events: string[];
  description?: string | null;
  disabled_reason: string | null;
  created_at: string;
}

interface Attempt {
  delivery_id: number;
  event_id: string;
  delivery_state?: string;
  attempt?: number;
  status_code?: number | null;
  duration_ms: number;
  error: string | null;
  created_at: string;
}

const eventTypes = ['score.updated', 'score.expiring'];

export function WebhooksPage() {
  const [scorers, setScorers] = useState<Scorer[]>([]);
  const [scorer, setScorer] = useState('');
  const [hooks, setHooks] = useState<Webhook[] | null>(null);
  const [unavailable, setUnavailable] = useState(false);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(eventTypes);
  const [secret, setSecret] = useState<string | null>(null);
  const [log, setLog] = useState<{ hook: number; items: Attempt[] } | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    api<{ items: Scorer[] }>('GET', '/v2/account/scorers').then((r) => {
      setScorers(r.items);
      setScorer(r.items[0]?.id ?? '');
    }, (e) => setProblem(errorText(e)));
  }, []);

  async function load() {
    if (scorer === '') return;
    try {
      setHooks((await api<{ items: Webhook[] }>('GET', `/v2/scorers/${scorer}/webhooks`)).items);
    } catch (error) {
      // A server without the webhook routes answers the router's 404.
      if (error instanceof ApiError && error.status === 404 && error.code === 'not_found') setUnavailable(true);
      else setProblem(errorText(error));
    }
  }
  useEffect(() => void load(), [scorer]);

  async function run(work: () => Promise<void>) {
    setProblem(null);
    try {
      await work();
    } catch (error) {
      setProblem(errorText(error));
    }
  }

  const create = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      const created = await api<{ id: number; secret: string }>('POST', `/v2/scorers/${scorer}/webhooks`, { url, events });
      setSecret(created.secret);
      setStatus(`Webhook ${created.id} created. Copy its signing secret now: it is shown only once.`);
      setUrl('');
      await load();
    });
  };
  const remove = (id: number) => run(async () => {
    await api('DELETE', `/v2/webhooks/${id}`);
    setStatus(`Webhook ${id} deleted.`);
    if (log?.hook === id) setLog(null);
    await load();
  });
  const showLog = (id: number) => run(async () => {
    setLog({ hook: id, items: (await api<{ items: Attempt[] }>('GET', `/v2/webhooks/${id}/deliveries`)).items });
  });
  const retry = (hook: number, delivery: number) => run(async () => {
    await api('POST', `/v2/webhooks/${hook}/deliveries/${delivery}/retry`);
    setStatus(`Delivery ${delivery} queued again.`);
    await showLog(hook);
  });

  if (unavailable) return <p class="card">Webhooks are not available on this server yet.</p>;
  return (
    <>
      <p role="status" class="status">{status}</p>
      {problem && <p role="alert" class="error">{problem}</p>}
      <div class="toolbar">
        <label>
          Scorer
          <select value={scorer} onChange={(e) => setScorer(e.currentTarget.value)}>
            {scorers.map((s) => <option key={s.id} value={s.id}>{`${s.name} (${s.id})`}</option>)}
          </select>
        </label>
      </div>
      {secret && (
        <section class="card secret" aria-labelledby="secret-title">
          <h2 id="secret-title">Signing secret</h2>
          <label>Secret (shown once)<input readOnly value={secret} onFocus={(e) => e.currentTarget.select()} /></label>
          <button type="button" class="secondary" onClick={() => setSecret(null)}>Done</button>
        </section>
      )}
      <form class="card" onSubmit={create} aria-labelledby="hook-form-title">
        <h2 id="hook-form-title">New webhook</h2>
        <label>Endpoint URL<input required type="url" maxLength={2000} placeholder="https://example.com/hooks/stampgate" value={url} onInput={(e) => setUrl(e.currentTarget.value)} /></label>
        <fieldset>
          <legend>Events</legend>
          {eventTypes.map((name) => (
            <label class="check" key={name}>
              <input type="checkbox" checked={events.includes(name)} onChange={(e) => setEvents(e.currentTarget.checked ? [...events, name] : events.filter((x) => x !== name))} />
              {name}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={scorer === '' || events.length === 0}>Create webhook</button>
      </form>
      <div class="table-wrap">
        <table>
          <caption>Webhooks of this scorer</caption>
          <thead><tr><th scope="col">ID</th><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {(hooks ?? []).length === 0 && <tr><td colSpan={5}>No webhooks.</td></tr>}
            {(hooks ?? []).map((hook) => (
              <tr key={hook.id}>
                <td>{hook.id}</td>
                <td class="wrap">{hook.url}</td>
                <td>{hook.events.join(', ')}</td>
                <td>{hook.disabled_reason ? `disabled: ${hook.disabled_reason}` : 'enabled'}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => showLog(hook.id)}>Delivery log</button>
                  <button type="button" class="danger" aria-label={`Delete webhook ${hook.id}`} onClick={() => remove(hook.id)}>Delete</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {log && (
        <div class="table-wrap">
          <table>
            <caption>{`Delivery log of webhook ${log.hook} (newest first)`}</caption>
            <thead><tr><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Error</th><th scope="col">Time</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {log.items.length === 0 && <tr><td colSpan={7}>No deliveries yet.</td></tr>}
              {log.items.map((item) => (
                <tr key={`${item.delivery_id}-${item.attempt ?? 0}`}>
                  <td>{item.event_id}</td>
                  <td>{item.attempt ?? ''}</td>
                  <td>{item.status_code ?? '—'}</td>
                  <td>{`${item.duration_ms} ms`}</td>
                  <td class="wrap">{item.error ?? ''}</td>
                  <td>{item.created_at}</td>
                  <td>
                    {!(item.status_code && item.status_code >= 200 && item.status_code < 300) && (
                      <button type="button" class="secondary" aria-label={`Retry delivery ${item.delivery_id}`} onClick={() => retry(log.hook, item.delivery_id)}>Retry</button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
