import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { ConfigError } from '../errors.js';
import { defaultValue, validateValue, type ConfigValue, type FileSpec, type SectionSpec } from './schema.js';

/**
 * smol-toml's message carries a code frame over several lines; an error
 * that a user reads in a log must be one line: the problem and where.
 */
function tomlProblem(error: unknown): string {
  const e = error as { message?: string; line?: unknown; column?: unknown };
  const first = (e.message ?? String(error)).split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? '';
  return typeof e.line === 'number' && typeof e.column === 'number' ? `${first} at line ${e.line}, column ${e.column}` : first;
}

export type Section = Readonly<Record<string, ConfigValue>>;

export interface LoadedFile {
  readonly path: string;
  readonly sections: Readonly<Record<string, Section>>;
  /** per-entry tables such as [samplers.cpu_usage]: table -> entry -> validated keys present in the file */
  readonly tables: Readonly<Record<string, Readonly<Record<string, Section>>>>;
  /** the top-level keys named in `extra`, as parsed (for the caller to check: [[rule]] arrays) */
  readonly extra: Readonly<Record<string, unknown>>;
}

/** Tables of named entries (`[samplers.<name>]`): the allowed names and the keys each may set. */
export interface TableSpec {
  readonly names: readonly string[];
  readonly keys: SectionSpec;
}

/**
 * Reads a TOML file (or, with path undefined, nothing) against a spec:
 * every missing key takes its default; unknown sections, keys and entries and
 * bad values throw a ConfigError naming the file, key and value.
 */
export function loadConfig(
  path: string | undefined,
  spec: FileSpec,
  tableSpecs: Readonly<Record<string, TableSpec>> = {},
  extra: readonly string[] = [],
): LoadedFile {
  const file = path ?? '(defaults)';
  let doc: Record<string, unknown> = {};
  if (path !== undefined) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`, { cause: error });
    }
    try {
      doc = parseToml(text) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError(`${path} is not valid TOML: ${tomlProblem(error)}`, { cause: error });
    }
  }
  for (const name of Object.keys(doc)) {
    if (!Object.hasOwn(spec, name) && !Object.hasOwn(tableSpecs, name) && !extra.includes(name)) {
      const known = [...Object.keys(spec), ...Object.keys(tableSpecs), ...extra].join(', ');
      throw new ConfigError(`${file}: unknown section [${name}] (known: ${known})`);
    }
  }
  const sections: Record<string, Section> = {};
  for (const [name, sectionSpec] of Object.entries(spec)) {
    sections[name] = readSection(doc[name], sectionSpec, file, name, true);
  }
  const tables: Record<string, Record<string, Section>> = {};
  for (const [name, t] of Object.entries(tableSpecs)) {
    const raw = doc[name] ?? {};
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(`${file}: [${name}] must be a table`);
    const entries: Record<string, Section> = {};
    for (const [entry, value] of Object.entries(raw)) {
      if (!t.names.includes(entry)) {
        throw new ConfigError(`${file}: unknown entry [${name}.${entry}] (known: ${t.names.join(', ')})`);
      }
      entries[entry] = readSection(value, t.keys, file, `${name}.${entry}`, false);
    }
    tables[name] = entries;
  }
  const extras: Record<string, unknown> = {};
  for (const name of extra) if (Object.hasOwn(doc, name)) extras[name] = doc[name];
  return { path: file, sections, tables, extra: extras };
}

function readSection(raw: unknown, spec: SectionSpec, file: string, name: string, withDefaults: boolean): Section {
  const table = raw ?? {};
  if (typeof table !== 'object' || table === null || Array.isArray(table)) {
    throw new ConfigError(`${file}: [${name}] must be a table, got ${JSON.stringify(raw)}`);
  }
  const out: Record<string, ConfigValue> = {};
  for (const key of Object.keys(table)) {
    if (!Object.hasOwn(spec.keys, key)) {
      throw new ConfigError(`${file}: unknown key [${name}] ${key} (known: ${Object.keys(spec.keys).join(', ')})`);
    }
  }
  for (const [key, keySpec] of Object.entries(spec.keys)) {
    const value = (table as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = validateValue(keySpec, value, file, name, key);
    else if (withDefaults) out[key] = defaultValue(keySpec);
  }
  return out;
}
