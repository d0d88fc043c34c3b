/**
 * docker/Dockerfile without a Docker engine: two linters (dockerfile-utils, dockerfilelint),
 * and what neither checks, read from its syntax tree (dockerfile-ast): every COPY --from names
 * an earlier stage, every COPY from the build context names a file of the repository that
 * .dockerignore lets through, both stages use the Node LTS of ARG NODE_VERSION, and the default
 * command is one the CLI accepts.
 */
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerfileParser } from 'dockerfile-ast';
import { bin, DOCKER_DIR, parseProblem, ROOT, run } from '../helpers/deploy.js';

const DOCKERFILE = join(DOCKER_DIR, 'Dockerfile');
let dir: string;
test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rezolus-dockerfile-'));
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

function brokenCopy(from: string | RegExp, to: string): string {
  const text = readFileSync(DOCKERFILE, 'utf8');
  const changed = text.replace(from, to);
  if (changed === text) throw new Error(`the edit ${String(from)} does not apply`);
  const path = join(mkdtempSync(join(dir, 'case-')), 'Dockerfile');
  writeFileSync(path, changed);
  return path;
}

test('dockerfile-utils lint: no problem; an unknown instruction is an error', (t) => {
  const ok = run(bin('dockerfile-utils'), ['lint', DOCKERFILE]);
  t.is(ok.status, 0, ok.output2);
  t.is(ok.output2.trim(), '');
  const bad = run(bin('dockerfile-utils'), ['lint', brokenCopy('RUN apt-get update', 'RUNN apt-get update')]);
  t.is(bad.status, 1);
  t.regex(bad.output2, /Unknown instruction: RUNN/);
});

test('dockerfilelint: no issue; an invalid port is one', (t) => {
  const ok = run(bin('dockerfilelint'), [DOCKERFILE]);
  t.is(ok.status, 0, ok.output2);
  t.regex(ok.output2, /Issues: None found/);
  const bad = run(bin('dockerfilelint'), [brokenCopy(/^EXPOSE 4241/m, 'EXPOSE 99999')]);
  t.regex(bad.output2, /Invalid Port Exposed/);
});

/** .dockerignore's patterns as docker reads them here: a path, or a glob with *, from the context root. */
function ignored(path: string): string | undefined {
  const patterns = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  if (patterns.some((p) => p.startsWith('!'))) throw new Error('.dockerignore exceptions (!) are not handled by this test');
  return patterns.find((p) => {
    const re = new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`);
    return re.test(path);
  });
}

/** What is wrong with the COPY instructions of a Dockerfile. */
function copyProblems(text: string): string[] {
  const problems: string[] = [];
  const stages: string[] = [];
  for (const inst of DockerfileParser.parse(text).getInstructions()) {
    const keyword = inst.getKeyword();
    if (keyword === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(inst.getTextContent())?.[1];
      stages.push(name ?? String(stages.length));
      continue;
    }
    if (keyword !== 'COPY' && keyword !== 'ADD') continue;
    const copy = inst as unknown as { getFromFlag(): { getValue(): string | null } | null; getArguments(): { getValue(): string }[] };
    const from = copy.getFromFlag()?.getValue();
    const args = copy.getArguments().map((a) => a.getValue());
    const line = inst.getRange().start.line + 1;
    if (from !== undefined && from !== null) {
      // a stage defined before this one (the last entry is the current stage)
      if (!stages.slice(0, -1).includes(from)) problems.push(`line ${line}: --from=${from} names no earlier stage (${stages.slice(0, -1).join(', ')})`);
      continue;
    }
    for (const src of args.slice(0, -1)) {
      const rel = src.replace(/^\.\//, '').replace(/\/$/, '');
      if (!existsSync(join(ROOT, rel))) problems.push(`line ${line}: ${src} is not in the repository`);
      const pattern = ignored(rel);
      if (pattern !== undefined) problems.push(`line ${line}: ${src} is excluded by .dockerignore (${pattern})`);
    }
  }
  return problems;
}

test('every COPY --from names an earlier stage, and every context COPY a file .dockerignore lets through', (t) => {
  const text = readFileSync(DOCKERFILE, 'utf8');
  t.deepEqual(copyProblems(text), []);
  t.true((text.match(/^COPY --from=build /gm) ?? []).length >= 8, 'the runtime stage takes the build stage\'s output');
  const one = (edited: string): string => {
    const p = copyProblems(edited);
    return p.length === 1 ? (p[0] as string).replace(/^line \d+: /, '') : `${p.length} problems: ${p.join('; ')}`;
  };
  t.is(one(text.replace('COPY --from=build /src/dist', 'COPY --from=buidl /src/dist')), '--from=buidl names no earlier stage (build)');
  t.is(one(text.replace('COPY subjects ./subjects', 'COPY subject ./subjects')), 'subject is not in the repository');
  t.is(one(text.replace('COPY src ./src', 'COPY test ./test')), 'test is excluded by .dockerignore (test)');
  t.is(ignored('dist/cli/rezolus.js'), 'dist');
  t.is(ignored('x.parquet'), '*.parquet');
  t.is(ignored('src/cli/main.ts'), undefined);
});

test('both stages run the Node LTS of ARG NODE_VERSION, 24 or 22 (Node 20 is past its end of life)', (t) => {
  const text = readFileSync(DOCKERFILE, 'utf8');
  const version = /^ARG NODE_VERSION=(\d+)$/m.exec(text)?.[1];
  t.true(version === '24' || version === '22', `NODE_VERSION=${version}`);
  const froms = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
  const image = (suffix: string): string => ['node:$', '{NODE_VERSION}-', suffix].join('');
  t.deepEqual(froms, [image('bookworm'), image('bookworm-slim')]);
});

test('the image runs the rezolus CLI, by default the agent with /etc/rezolus/agent.toml (shipped as config/agent.toml)', (t) => {
  const text = readFileSync(DOCKERFILE, 'utf8');
  const entrypoint = JSON.parse(/^ENTRYPOINT (.+)$/m.exec(text)?.[1] ?? '[]') as string[];
  const cmd = JSON.parse(/^CMD (.+)$/m.exec(text)?.[1] ?? '[]') as string[];
  t.deepEqual(entrypoint, ['node', '/opt/rezolus/bin/rezolus.js']);
  t.deepEqual(cmd, ['agent', '--config', '/etc/rezolus/agent.toml']);
  t.true(existsSync(join(ROOT, 'config', 'agent.toml')));
  t.regex(text, /^COPY config \/etc\/rezolus$/m);
  t.is(parseProblem(cmd), '');
});
