// A small line chart (SVG, no chart library): one or two series over the same time axis,
// with the latest value and the maximum written beside it.

export interface Series {
  label: string;
  values: number[];
  color: string;
}

export default function Sparkline({
  title,
  series,
  format,
  max,
  testId,
}: {
  title: string;
  series: Series[];
  format: (v: number) => string;
  /** Fixed top of the scale (e.g. 100 for percentages); else the largest value. */
  max?: number;
  testId?: string;
}) {
  const w = 220;
  const h = 44;
  const n = Math.max(0, ...series.map((s) => s.values.length));
  const top = max ?? Math.max(1e-9, ...series.flatMap((s) => s.values));
  const points = (values: number[]) =>
    values
      .map((v, i) => {
        const x = n > 1 ? (i * w) / (n - 1) : w;
        const y = h - (Math.min(v, top) / top) * (h - 2) - 1;
        return `${x.toFixed(1)},${y.toFixed(1)}`;
      })
      .join(' ');
  return (
    <div style={{ display: 'inline-block', marginRight: 16, marginBottom: 8 }} data-testid={testId}>
      <div style={{ fontSize: 12, color: '#555' }}>
        {title}
        {series.map((s) => (
          <span key={s.label} style={{ color: s.color, marginLeft: 8 }}>
            {s.label} {s.values.length ? format(s.values[s.values.length - 1]) : '-'}
          </span>
        ))}
      </div>
      <svg width={w} height={h} style={{ background: '#fafafa', border: '1px solid #eee' }} role="img" aria-label={title}>
        {n === 0 && (
          <text x={w / 2} y={h / 2 + 4} textAnchor="middle" fontSize="11" fill="#999">
            no samples yet
          </text>
        )}
        {series.map((s) => (s.values.length > 1 ? <polyline key={s.label} fill="none" stroke={s.color} strokeWidth="1.5" points={points(s.values)} /> : null))}
      </svg>
      <div style={{ fontSize: 11, color: '#999' }}>max {format(top)}</div>
    </div>
  );
}
