/**
 * Small inline SVG charts built as DOM (no markup parsed, no style attribute: the CSP allows
 * neither), coloured by the stylesheet's classes. Only numbers the page computed go in.
 */
const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, number | string>,
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

const WIDTH = 240;
const HEIGHT = 40;

export interface Bar {
  /** The whole bar (requests). */
  value: number;
  /** The part of it drawn as errors. */
  part: number;
}

/** One bar per interval, the error part at its foot; `label` describes it for assistive technology. */
export function barChart(bars: readonly Bar[], slots: number, label: string): SVGSVGElement {
  const chart = svg('svg', {
    class: 'chart',
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    width: WIDTH,
    height: HEIGHT,
    role: 'img',
    'aria-label': label,
  });
  chart.append(svg('line', { class: 'axis', x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5 }));
  const max = Math.max(1, ...bars.map((b) => b.value));
  const step = WIDTH / Math.max(slots, bars.length, 1);
  const offset = WIDTH - step * bars.length; // the newest interval at the right edge
  bars.forEach((bar, i) => {
    const x = offset + i * step;
    const height = (bar.value / max) * (HEIGHT - 2);
    const errors = (bar.part / max) * (HEIGHT - 2);
    if (height > 0)
      chart.append(
        svg('rect', { class: 'bar', x, y: HEIGHT - height, width: Math.max(1, step - 1), height }),
      );
    if (errors > 0)
      chart.append(
        svg('rect', {
          class: 'bar-error',
          x,
          y: HEIGHT - errors,
          width: Math.max(1, step - 1),
          height: errors,
        }),
      );
  });
  return chart;
}
