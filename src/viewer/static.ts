/**
 * The page: `/` is index.html, and the bundle's files (scripts/build-web.mjs
 * writes them to dist/viewer/web/) are served by name from that one
 * directory: no directory listing, no path below it, a fixed content type
 * per extension. Without a bundle, `/` answers 500 naming `npm run build`.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * dist/viewer/web/ of this checkout: this module is dist/viewer/static.js when
 * built and src/viewer/static.ts under tsx; two levels up is the root either way.
 */
export const WEB_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'viewer', 'web');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** a file name of the bundle: no slash, no leading dot, a known extension */
const FILE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(\.html|\.js|\.css|\.map|\.svg|\.png)$/;

const MISSING = 'the viewer page is not built: run `npm run build` (it bundles src/viewer/web/ into dist/viewer/web/)';

async function sendFile(reply: FastifyReply, dir: string, name: string, missingStatus: 404 | 500): Promise<FastifyReply> {
  const match = FILE.exec(name);
  if (match === null) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
  let body: Buffer;
  try {
    body = await readFile(join(dir, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (missingStatus === 500) return reply.code(500).type('text/plain; charset=utf-8').send(MISSING);
    return reply.code(404).type('text/plain; charset=utf-8').send('not found');
  }
  const type = TYPES[match[1] ?? ''] ?? 'application/octet-stream';
  // index.html names the bundle's files; it must not be cached across builds, they may be briefly
  return reply
    .type(type)
    .header('cache-control', name === 'index.html' ? 'no-cache' : 'max-age=60')
    .header('x-content-type-options', 'nosniff')
    .send(body);
}

/** Serves the page and its bundle from `dir` (default dist/viewer/web/). */
export function registerWebRoutes(app: FastifyInstance, dir: string = WEB_DIR): void {
  app.get('/', async (_req, reply) => sendFile(reply, dir, 'index.html', 500));
  app.get('/index.html', async (_req, reply) => sendFile(reply, dir, 'index.html', 500));
  app.get<{ Params: { file: string } }>('/web/:file', async (req, reply) => sendFile(reply, dir, req.params.file, 404));
}
