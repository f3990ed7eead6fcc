/** One line of a chart: its values over time (ISO time, value). */
export interface Series {
  label: string;
  points: { at: string; value: number }[];
  /** Which line style (`.line-0`, `.line-1` in style.css). */
  tone?: 0 | 1;
}

const W = 320;
const H = 120;
const PAD = 4;

/**
 * A small line chart in SVG: time across, value up from 0 to `max` (or the largest value).
 * The image is described for screen readers by its latest values; the axes carry only the
 * bounds, the chart is for the shape.
 */
export function LineChart({ title, series, format, max }: { title: string; series: Series[]; format: (v: number) => string; max?: number }) {
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) {
    return (
      <figure class="chart">
        <figcaption>{title}</figcaption>
        <p class="muted">No samples yet.</p>
      </figure>
    );
  }
  const times = all.map((p) => Date.parse(p.at));
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  const top = max ?? Math.max(...all.map((p) => p.value), 1e-9);
  const x = (at: string) => PAD + ((Date.parse(at) - t0) / (t1 - t0 || 1)) * (W - 2 * PAD);
  const y = (v: number) => H - PAD - (Math.min(v, top) / top) * (H - 2 * PAD);
  const latest = series.map((s) => `${s.label} ${s.points.length ? format(s.points[s.points.length - 1]!.value) : 'none'}`).join(', ');
  return (
    <figure class="chart">
      <figcaption>{title} <span class="muted">(now: {latest})</span></figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${latest}`} preserveAspectRatio="none">
        <line x1={PAD} y1={H - PAD} x2={W - PAD} y2={H - PAD} class="axis" />
        <line x1={PAD} y1={PAD} x2={W - PAD} y2={PAD} class="grid" />
        {series.map((s, i) => (
          <polyline key={s.label} class={`line-${s.tone ?? i % 2}`} fill="none"
            points={[...s.points].sort((a, b) => Date.parse(a.at) - Date.parse(b.at)).map((p) => `${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ')} />
        ))}
      </svg>
      <div class="chart-scale muted"><span>0</span><span>max {format(top)}</span></div>
      {series.length > 1 && (
        <ul class="legend">
          {series.map((s, i) => <li key={s.label} class={`key-${s.tone ?? i % 2}`}>{s.label}</li>)}
        </ul>
      )}
    </figure>
  );
}
