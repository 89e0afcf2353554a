import { type Html, html } from '../../html.js';

/** One series of a chart: a CSS class (its colour, in site.css) and a value per point. */
export interface ChartSeries {
  name: string;
  className: string;
  values: number[];
}

export interface ChartInput {
  /** The chart's accessible name. */
  title: string;
  /** One label per point (dates), the first and last are printed under the chart. */
  labels: string[];
  series: ChartSeries[];
  /** How values read in tooltips and on the axis (sizes, counts). */
  format: (value: number) => string;
  /** Bars (one series) or lines. */
  kind: 'bars' | 'lines';
}

const WIDTH = 600;
const HEIGHT = 160;
const TOP = 8;
const BOTTOM = HEIGHT - 4;

/**
 * A small chart as inline SVG, drawn on the server: no script, no chart library, nothing
 * the page's CSP would refuse. It scales to its box (viewBox); the colours come from
 * classes in site.css. Each point carries a <title> with its value (a tooltip, and what
 * a screen reader reads); the caption gives the peak, and the totals above the charts.
 */
export function svgChart(input: ChartInput): Html {
  const count = input.labels.length;
  const max = Math.max(1, ...input.series.flatMap((s) => s.values));
  const y = (value: number) => BOTTOM - ((BOTTOM - TOP) * value) / max;
  const step = WIDTH / Math.max(1, count);
  const x = (i: number) => step * i + step / 2;
  const fixed = (n: number) => n.toFixed(1);
  let shapes: Html[];
  if (input.kind === 'bars') {
    const series = input.series[0]!;
    const width = Math.max(1, step * 0.7);
    shapes = series.values.map(
      (value, i) =>
        html`<rect class="${series.className}" x="${fixed(x(i) - width / 2)}" y="${fixed(y(value))}" width="${fixed(width)}" height="${fixed(BOTTOM - y(value))}"><title>${input.labels[i]}: ${input.format(value)}</title></rect>`,
    );
  } else {
    shapes = input.series.map((series) => {
      const points = series.values.map((value, i) => `${fixed(x(i))},${fixed(y(value))}`).join(' ');
      const dots = series.values.map(
        (value, i) =>
          html`<circle class="${series.className}" cx="${fixed(x(i))}" cy="${fixed(y(value))}" r="3"><title>${series.name}, ${input.labels[i]}: ${input.format(value)}</title></circle>`,
      );
      return html`<polyline class="${series.className}" points="${points}"></polyline>${dots}`;
    });
  }
  const legend =
    input.series.length > 1
      ? html`<p class="chart-legend">${input.series.map((s) => html`<span><i class="swatch ${s.className}"></i>${s.name}</span>`)}</p>`
      : '';
  return html`<figure class="chart">
<figcaption>${input.title} <span class="meta">(peak ${input.format(max === 1 && input.series.every((s) => s.values.every((v) => v === 0)) ? 0 : max)})</span></figcaption>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${input.title}">
<line class="axis" x1="0" y1="${BOTTOM}" x2="${WIDTH}" y2="${BOTTOM}"></line>
${shapes}
</svg>
<p class="scale"><span>${input.labels[0] ?? ''}</span><span>${input.labels.at(-1) ?? ''}</span></p>
${legend}
</figure>`;
}
