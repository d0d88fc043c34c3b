#!/usr/bin/env node
// Runs the compiled CLI (npm run build); npm start builds it first.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const entry = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli', 'rezolus.js');
if (!existsSync(entry)) {
  process.stderr.write(`rezolus: ${entry} is missing; run "npm run build" (or "npm start") first\n`);
  process.exit(1);
}
await import(entry);
