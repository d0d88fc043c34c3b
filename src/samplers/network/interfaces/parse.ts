import { parseU64 } from '../../../metrics/u64.js';
import { splitFields } from '../../fields.js';

export type { Counter } from '../../../metrics/u64.js';
import type { Counter } from '../../../metrics/u64.js';

/** The receive columns of /proc/net/dev, in kernel order. */
export const RECEIVE_FIELDS = ['bytes', 'packets', 'errs', 'drop', 'fifo', 'frame', 'compressed', 'multicast'] as const;
/** The transmit columns of /proc/net/dev, in kernel order. */
export const TRANSMIT_FIELDS = ['bytes', 'packets', 'errs', 'drop', 'fifo', 'colls', 'carrier', 'compressed'] as const;

export type ReceiveField = (typeof RECEIVE_FIELDS)[number];
export type TransmitField = (typeof TRANSMIT_FIELDS)[number];

/** One interface line of /proc/net/dev. */
export interface NetDevice {
  readonly device: string;
  readonly receive: Readonly<Record<ReceiveField, Counter>>;
  readonly transmit: Readonly<Record<TransmitField, Counter>>;
}

export interface NetDevTable {
  readonly devices: NetDevice[];
  /** data lines left out: no `:`, empty name, wrong column count or a value that is not a u64 */
  readonly skipped: number;
}

const COLUMNS = RECEIVE_FIELDS.length + TRANSMIT_FIELDS.length;

/**
 * Parses /proc/net/dev. The two header lines (they contain `|`) are not data.
 * Every other non-blank line is `<name>: <16 counters>`; the kernel pads the
 * name but may leave no space after the colon, so the name ends at the first
 * `:` (interface names cannot contain one). A line that does not fit is
 * skipped and counted; this never throws.
 */
export function parseNetDev(text: string): NetDevTable {
  const devices: NetDevice[] = [];
  let skipped = 0;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n] as string;
    if (n < 2 && line.includes('|')) continue;
    const colon = line.indexOf(':');
    if (colon < 0) {
      if (line.trim() !== '') skipped++;
      continue;
    }
    const device = line.slice(0, colon).trim();
    const fields = splitFields(line, colon + 1);
    const values = device === '' || fields.length !== COLUMNS ? undefined : parseAll(fields);
    if (values === undefined) {
      skipped++;
      continue;
    }
    devices.push({
      device,
      receive: {
        bytes: values[0] as Counter,
        packets: values[1] as Counter,
        errs: values[2] as Counter,
        drop: values[3] as Counter,
        fifo: values[4] as Counter,
        frame: values[5] as Counter,
        compressed: values[6] as Counter,
        multicast: values[7] as Counter,
      },
      transmit: {
        bytes: values[8] as Counter,
        packets: values[9] as Counter,
        errs: values[10] as Counter,
        drop: values[11] as Counter,
        fifo: values[12] as Counter,
        colls: values[13] as Counter,
        carrier: values[14] as Counter,
        compressed: values[15] as Counter,
      },
    });
  }
  return { devices, skipped };
}

function parseAll(fields: readonly string[]): Counter[] | undefined {
  const out: Counter[] = new Array<Counter>(fields.length);
  for (let i = 0; i < fields.length; i++) {
    const v = parseU64(fields[i] as string);
    if (v === undefined) return undefined;
    out[i] = v;
  }
  return out;
}
