/**
 * DuckDB as the independent Parquet reader of the tests: one in-memory
 * database per test file, rows as plain objects, and the column and file
 * key/value metadata as string maps.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

/** A BLOB or VARCHAR cell as text. */
export function text(v: unknown): string {
  if (typeof v === 'string') return v;
  const bytes = (v as { bytes?: Uint8Array }).bytes;
  return bytes === undefined ? String(v) : Buffer.from(bytes).toString();
}

export class Duck {
  readonly #con: DuckDBConnection;

  private constructor(con: DuckDBConnection) {
    this.#con = con;
  }

  static async open(): Promise<Duck> {
    return new Duck(await (await DuckDBInstance.create(':memory:')).connect());
  }

  async rows(sql: string): Promise<Record<string, unknown>[]> {
    return (await this.#con.runAndReadAll(sql)).getRowObjects() as Record<string, unknown>[];
  }

  /** The key/value metadata of `column` in row group `group`. */
  async columnMeta(path: string, column: string, group = 0): Promise<Record<string, string>> {
    const meta = await this.rows(`SELECT path_in_schema, key_value_metadata FROM parquet_metadata('${path}') WHERE row_group_id = ${group}`);
    const entry = meta.find((r) => String(r.path_in_schema).split(', ')[0] === column);
    const pairs = (entry?.key_value_metadata as { entries: { key: unknown; value: unknown }[] } | undefined)?.entries ?? [];
    return Object.fromEntries(pairs.map((p) => [text(p.key), text(p.value)]));
  }

  /** The file's key/value metadata. */
  async fileMeta(path: string): Promise<Record<string, string>> {
    return Object.fromEntries((await this.rows(`SELECT key, value FROM parquet_kv_metadata('${path}')`)).map((r) => [text(r.key), text(r.value)]));
  }

  /** Rows per row group. */
  async groupSizes(path: string): Promise<number[]> {
    const groups = await this.rows(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${path}') ORDER BY 1`);
    return groups.map((g) => Number(g.row_group_num_rows));
  }
}
