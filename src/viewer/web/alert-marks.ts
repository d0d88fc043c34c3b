/**
 * Alert markers on a time chart (a uPlot plugin): each transition of the
 * chart's host in view is a thin vertical line in its state's colour with a
 * small flag above the plotting area; the cursor near one (or a few close
 * together) shows what they are: rule, state, time, value against the
 * threshold, summary. The cursor, brush and zoom stay uPlot's (the tip
 * takes no pointer events).
 */
import type uPlot from 'uplot';
import type { AlertMark, AlertMarkState } from '../api.js';
import { formatClock } from './clock.js';
import { el, replace } from './dom.js';

export const STATE_COLORS: Readonly<Record<AlertMarkState, string>> = {
  firing: '#d7191c',
  pending: '#f29e0c',
  resolved: '#1f9d48',
  stale: '#8d949c',
  inactive: '#b7bcc2',
};

/** How near the cursor (CSS px) a marker must be to be described. */
const HOVER_PX = 5;
/** Markers one tip describes at most. */
const TIP_MAX = 4;
const FLAG_H = 7;
const FLAG_W = 4;

/** A marker as drawn: the event and its x from the plotting area's left, CSS px (for the hover and the tests). */
export interface DrawnMark {
  readonly at: number;
  readonly rule: string;
  readonly state: AlertMarkState;
  readonly x: number;
}

/** "4.2 ms (threshold 1 ms)", or what of it is known. */
export function valueLine(m: AlertMark): string {
  if (m.valueText === '') return m.thresholdText === '' ? 'no value' : `no value (threshold ${m.thresholdText})`;
  return m.thresholdText === '' ? m.valueText : `${m.valueText} (threshold ${m.thresholdText})`;
}

/** The series labels as `k=v, …` ('' for a summed rule). */
export function seriesText(m: AlertMark): string {
  return Object.entries(m.series)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

/** A state's name on its colour. */
export function stateBadge(state: string, color: string): HTMLElement {
  const b = el('span', { class: 'alert-state' }, state);
  b.style.background = color;
  return b;
}

export class AlertLayer {
  drawn: DrawnMark[] = [];
  private shown: readonly AlertMark[] = [];
  /** the pointer is over this chart (the synced charts follow its cursor but show no tip) */
  private inside = false;
  private readonly tip = el('div', { class: 'alert-tip', hidden: true });

  constructor(
    /** the host's events (transitions are drawn, captures are not) */
    private readonly marks: () => readonly AlertMark[],
    /** after each draw, with what was drawn */
    private readonly onDrawn?: (drawn: readonly DrawnMark[]) => void,
  ) {}

  plugin(): uPlot.Plugin {
    return {
      hooks: {
        ready: [
          (u: uPlot) => {
            u.over.append(this.tip);
            u.over.addEventListener('mouseenter', () => {
              this.inside = true;
            });
            u.over.addEventListener('mouseleave', () => {
              this.inside = false;
              this.tip.hidden = true;
            });
          },
        ],
        draw: [(u: uPlot) => this.draw(u)],
        setCursor: [(u: uPlot) => this.hover(u)],
      },
    };
  }

  private draw(u: uPlot): void {
    const dpr = devicePixelRatio;
    const { left, top, width, height } = u.bbox;
    const drawn: DrawnMark[] = [];
    const shown: AlertMark[] = [];
    const ctx = u.ctx;
    ctx.save();
    const width1 = Math.max(1, Math.round(1.5 * dpr));
    for (const m of this.marks()) {
      if (m.kind !== 'transition' || m.state === null) continue;
      const x = u.valToPos(m.at / 1000, 'x', true);
      if (!(x >= left - 0.5 && x <= left + width + 0.5)) continue;
      const color = STATE_COLORS[m.state];
      // whole device pixels: a crisp line, not two half-lit columns
      const px = Math.round(x);
      ctx.beginPath();
      ctx.moveTo(px, top);
      ctx.lineTo(px, top + height);
      // a light halo under the line: it stands out on a heatmap's dark cells as on a white chart
      ctx.strokeStyle = 'rgba(255,255,255,0.75)';
      ctx.lineWidth = width1 + 2 * dpr;
      ctx.stroke();
      ctx.strokeStyle = color;
      ctx.lineWidth = width1;
      ctx.globalAlpha = 0.9;
      ctx.stroke();
      ctx.globalAlpha = 1;
      ctx.fillStyle = color;
      ctx.beginPath();
      ctx.moveTo(px - FLAG_W * dpr, top - FLAG_H * dpr);
      ctx.lineTo(px + FLAG_W * dpr, top - FLAG_H * dpr);
      ctx.lineTo(px, top);
      ctx.closePath();
      ctx.fill();
      drawn.push({ at: m.at, rule: m.rule, state: m.state, x: (px - left) / dpr });
      shown.push(m);
    }
    ctx.restore();
    this.drawn = drawn;
    this.shown = shown;
    this.onDrawn?.(drawn);
  }

  private hover(u: uPlot): void {
    const left = u.cursor.left;
    const near: number[] = [];
    if (this.inside && left !== undefined && left >= 0) this.drawn.forEach((d, i) => Math.abs(d.x - left) <= HOVER_PX && near.push(i));
    if (near.length === 0) {
      this.tip.hidden = true;
      return;
    }
    const x = this.drawn[near[0] as number]?.x ?? 0;
    const rows = near.slice(0, TIP_MAX).map((i) => this.describe(this.shown[i] as AlertMark));
    replace(this.tip, ...rows, near.length > TIP_MAX ? el('div', { class: 'muted' }, `+${near.length - TIP_MAX} more here`) : false);
    this.tip.hidden = false;
    // beside the marker, on the side with room
    const onLeft = x > u.over.clientWidth / 2;
    this.tip.style.left = onLeft ? '' : `${x + 8}px`;
    this.tip.style.right = onLeft ? `${u.over.clientWidth - x + 8}px` : '';
  }

  private describe(m: AlertMark): HTMLElement {
    const state = m.state ?? 'inactive';
    const series = seriesText(m);
    return el(
      'div',
      { class: 'alert-tip-row' },
      el('b', {}, m.rule),
      ' ',
      stateBadge(state, STATE_COLORS[state]),
      el('span', { class: 'muted' }, ` ${formatClock(m.at, false)}`),
      el('div', {}, valueLine(m), series === '' ? '' : el('span', { class: 'muted' }, ` · ${series}`)),
      m.summary === '' ? false : el('div', { class: 'alert-summary' }, m.summary),
    );
  }
}
