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

export interface Header {
  readonly protocol: string;
  readonly header: string;
  readonly fields: readonly string[];
}

function tokens(line: string, colon: number): string[] {
  const rest = line.slice(colon + 1).trim();
  return rest === '' ? [] : rest.split(' ');
}

/**
 * The last header line of each protocol and its field names: the caller
 * keeps one from read to read, and the headers, which do not change while
 * the kernel runs, are split once instead of at every read.
 */
export type HeaderMemo = Map<string, Header>;

/** protocols a HeaderMemo holds before it starts again (a kernel prints about ten) */
export const HEADER_MEMO_MAX = 64;

function header(protocol: string, line: string, colon: number, memo: HeaderMemo | undefined): Header {
  const known = memo?.get(protocol);
  if (known !== undefined && known.header === line) return known;
  const made: Header = { protocol, header: line, fields: tokens(line, colon) };
  if (memo !== undefined) {
    if (memo.size >= HEADER_MEMO_MAX) memo.clear();
    memo.set(protocol, made);
  }
  return made;
}

/**
 * Pairs header and value lines into blocks. A line whose protocol differs
 * from the pending header's starts a new pair (the pending header is counted
 * as skipped), so one damaged block does not shift the others. Never throws.
 * `memo` (optional, kept by the caller) saves splitting headers seen before;
 * the result is the same with it or without.
 */
export function parseProtocolBlocks(text: string, memo?: HeaderMemo): ProtocolTable {
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
    pending = header(protocol, line, colon, memo);
  }
  if (pending !== undefined) skipped++;
  return { blocks, skipped };
}
