import { api, errorText } from './api.js';

/** One chain's entry of GET /v2/onchain/scores/{scorer_id}/{address}: its decoder's answer, or why it has none. */
type ChainScore =
  | { chain_id: number; decoder: string; attested: boolean; score: string; passing: boolean; time: string; expiration_time: string }
  | { chain_id: number; decoder: string; error: { code: string; detail: string } };

/** What the lookup shows of the chains: their entries (none when no chain is deployed), or the request's failure. */
export type OnchainLookup = { chains: ChainScore[] } | { problem: string };

/** Reads every deployed chain's decoder (the server reads the chains only: nothing is recorded). */
export async function lookUpOnchain(scorer: string, address: string): Promise<OnchainLookup> {
  try {
    return { chains: (await api<{ chains: ChainScore[] }>('GET', `/v2/onchain/scores/${scorer}/${address}`)).chains };
  } catch (error) {
    return { problem: errorText(error) };
  }
}

// Written as the stored score's times are (ISO 8601 with +00:00), so the two read alike.
const unixTime = (seconds: string) => new Date(Number(seconds) * 1000).toISOString().replace('Z', '+00:00');

function ChainRow({ entry }: { entry: ChainScore }) {
  if ('error' in entry) {
    const what = entry.error.code === 'upstream_unavailable' ? 'chain unreachable' : 'no RPC URL configured for this chain';
    return (
      <tr>
        <td>{entry.chain_id}</td>
        <td colSpan={4} title={entry.error.detail}>{what}</td>
      </tr>
    );
  }
  if (!entry.attested) {
    return (
      <tr>
        <td>{entry.chain_id}</td>
        <td colSpan={4}>not attested</td>
      </tr>
    );
  }
  return (
    <tr>
      <td>{entry.chain_id}</td>
      <td>{entry.score}</td>
      <td>{entry.passing ? 'yes' : 'no'}</td>
      <td>{unixTime(entry.time)}</td>
      <td>{unixTime(entry.expiration_time)}</td>
    </tr>
  );
}

/** One row per deployed chain: what an integrator's contract reads there, beside the stored score. */
export function OnchainScores({ lookup }: { lookup: OnchainLookup }) {
  if ('problem' in lookup) return <p class="error">{`Onchain scores could not be read: ${lookup.problem}`}</p>;
  if (lookup.chains.length === 0) return <p class="hint" data-testid="onchain-none">Onchain: no chain is deployed on this server.</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption>{`Onchain scores (${lookup.chains.length} ${lookup.chains.length === 1 ? 'chain' : 'chains'})`}</caption>
        <thead>
          <tr><th scope="col">Chain</th><th scope="col">Onchain score</th><th scope="col">Passing</th><th scope="col">Attested at</th><th scope="col">Expires</th></tr>
        </thead>
        <tbody>
          {lookup.chains.map((entry) => <ChainRow key={entry.chain_id} entry={entry} />)}
        </tbody>
      </table>
    </div>
  );
}
