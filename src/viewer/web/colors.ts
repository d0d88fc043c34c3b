/** Line colours: one hue per series, and the same hue lighter for its burst line and band. Pure. */

export const LINE_COLORS: readonly string[] = [
  '#1f6fb4',
  '#e0701a',
  '#2c9a4a',
  '#c62f3a',
  '#7b52ab',
  '#8a5a44',
  '#d455a8',
  '#6b6b6b',
  '#a7a21c',
  '#1aa3b8',
  '#0b3d91',
  '#f2b134',
  '#76c043',
  '#ff7f7f',
  '#b39ddb',
  '#5d3a1a',
  '#f06292',
  '#37474f',
  '#cddc39',
  '#006064',
  '#ff5722',
  '#3f51b5',
  '#009688',
  '#9c27b0',
];

/** The colour of series i (cycling). */
export function lineColor(i: number): string {
  return LINE_COLORS[((i % LINE_COLORS.length) + LINE_COLORS.length) % LINE_COLORS.length] ?? '#000000';
}

/** `#rrggbb` with an alpha as `rgba(r,g,b,a)`. */
export function withAlpha(hex: string, alpha: number): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (m === null) return hex;
  return `rgba(${parseInt(m[1] ?? '0', 16)},${parseInt(m[2] ?? '0', 16)},${parseInt(m[3] ?? '0', 16)},${alpha})`;
}
