import { useEffect, useState } from 'preact/hooks';
import { api, errorText, type Usage } from '../api.js';
import { UsageChart } from '../usage-chart.js';

const sum = (rows: number[][], length: number) => Array.from({ length }, (_, i) => rows.reduce((total, row) => total + (row[i] ?? 0), 0));

export function UsagePage() {
  const [days, setDays] = useState(14);
  const [key, setKey] = useState('all');
  const [usage, setUsage] = useState<Usage | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const load = () => api<Usage>('GET', `/v2/account/usage?days=${days}`).then(setUsage, (e) => setProblem(errorText(e)));
  useEffect(() => void load(), [days]);

  const chosen = usage ? usage.keys.filter((k) => key === 'all' || k.prefix === key) : [];
  const length = usage?.days.length ?? 0;
  const requests = sum(chosen.map((k) => k.requests), length);
  const rateLimited = sum(chosen.map((k) => k.rate_limited), length);

  return (
    <>
      {problem && <p role="alert" class="error">{problem}</p>}
      <div class="toolbar">
        <label>
          Key
          <select value={key} onChange={(e) => setKey(e.currentTarget.value)}>
            <option value="all">All keys</option>
            {usage?.keys.map((k) => <option key={k.prefix} value={k.prefix}>{`${k.name} (${k.prefix})${k.revoked ? ', revoked' : ''}`}</option>)}
          </select>
        </label>
        <label>
          Period
          <select value={String(days)} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            <option value="7">7 days</option>
            <option value="14">14 days</option>
            <option value="30">30 days</option>
            <option value="90">90 days</option>
          </select>
        </label>
        <button type="button" class="secondary" onClick={() => void load()}>Refresh</button>
      </div>
      {usage && <UsageChart days={usage.days} requests={requests} rateLimited={rateLimited} />}
      {usage && (
        <details>
          <summary>The figures as a table</summary>
          <div class="table-wrap">
            <table>
              <caption>Requests per UTC day</caption>
              <thead><tr><th scope="col">Day</th><th scope="col">Requests</th><th scope="col">429 answers</th></tr></thead>
              <tbody>
                {usage.days.map((day, i) => <tr key={day}><td>{day}</td><td>{requests[i]}</td><td>{rateLimited[i]}</td></tr>)}
              </tbody>
            </table>
          </div>
        </details>
      )}
    </>
  );
}
