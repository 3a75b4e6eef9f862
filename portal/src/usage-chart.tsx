/** A small bar chart in SVG: requests per day, with the 429 answers of each day in a second colour. */
export function UsageChart({ days, requests, rateLimited }: { days: string[]; requests: number[]; rateLimited: number[] }) {
  const width = 640;
  const height = 220;
  const pad = { left: 40, right: 8, top: 12, bottom: 28 };
  const max = Math.max(1, ...requests);
  const slot = (width - pad.left - pad.right) / Math.max(1, days.length);
  const bar = Math.max(2, slot * 0.7);
  const y = (value: number) => pad.top + (height - pad.top - pad.bottom) * (1 - value / max);
  const total = requests.reduce((a, b) => a + b, 0);
  const limited = rateLimited.reduce((a, b) => a + b, 0);
  const labelEvery = Math.ceil(days.length / 7);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Requests per day: ${total} in total, ${limited} rate-limited (429).`} data-total={total} data-limited={limited}>
        <line x1={pad.left} x2={width - pad.right} y1={y(0)} y2={y(0)} class="axis" />
        <text x={pad.left - 6} y={y(max) + 4} class="tick" text-anchor="end">{max}</text>
        <text x={pad.left - 6} y={y(0)} class="tick" text-anchor="end">0</text>
        {days.map((day, i) => {
          const x = pad.left + i * slot + (slot - bar) / 2;
          const count = requests[i] ?? 0;
          const refused = rateLimited[i] ?? 0;
          return (
            <g key={day}>
              <title>{`${day}: ${count} requests, ${refused} rate-limited`}</title>
              <rect x={x} y={y(count)} width={bar} height={y(0) - y(count)} class="bar" />
              <rect x={x} y={y(refused)} width={bar} height={y(0) - y(refused)} class="bar-limited" />
              {i % labelEvery === 0 && <text x={x + bar / 2} y={height - 8} class="tick" text-anchor="middle">{day.slice(5)}</text>}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <span class="swatch bar" aria-hidden="true" /> requests ({total}) <span class="swatch bar-limited" aria-hidden="true" /> 429 answers ({limited})
      </figcaption>
    </figure>
  );
}
