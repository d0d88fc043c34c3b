/**
 * /proc/net/snmp and /proc/net/netstat hold one pair of lines per protocol:
 *
 *     Tcp: RtoAlgorithm RtoMin ... InCsumErrors
 *     Tcp: 1 200 ... 0
 *
 * The kernel separates names and values by single spaces.
 */
export interface ProtocolBlock {
  /** the text before the colon: `Ip`, `Tcp`, `TcpExt`, ... */
  readonly protocol: string;
  /** the header line as read; equal headers mean equal field layouts */
  readonly header: string;
  readonly fields: readonly string[];
  /** raw value tokens, one per field; not parsed here (some are signed, e.g. Tcp.MaxConn) */
  readonly values: readonly string[];
}

export interface ProtocolTable {
  readonly blocks: ProtocolBlock[];
  /**
   * blocks left out: a value line whose count differs from its header's, a
   * header without a value line, a line without a colon
   */
  readonly skipped: number;
}

interface Header {
  readonly protocol: string;
  readonly header: string;
  readonly fields: readonly string[];
}

function tokens(line: string, colon: number): string[] {
  const rest = line.slice(colon + 1).trim();
  return rest === '' ? [] : rest.split(' ');
}

/**
 * Pairs header and value lines into blocks. A line whose protocol differs
 * from the pending header's starts a new pair (the pending header is counted
 * as skipped), so one damaged block does not shift the others. Never throws.
 */
export function parseProtocolBlocks(text: string): ProtocolTable {
  const blocks: ProtocolBlock[] = [];
  let skipped = 0;
  let pending: Header | undefined;
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) {
      if (line.trim() !== '') skipped++;
      continue;
    }
    const protocol = line.slice(0, colon);
    if (pending !== undefined && pending.protocol === protocol) {
      const values = tokens(line, colon);
      if (values.length === pending.fields.length) {
        blocks.push({ protocol, header: pending.header, fields: pending.fields, values });
      } else {
        skipped++;
      }
      pending = undefined;
      continue;
    }
    if (pending !== undefined) skipped++;
    pending = { protocol, header: line, fields: tokens(line, colon) };
  }
  if (pending !== undefined) skipped++;
  return { blocks, skipped };
}
