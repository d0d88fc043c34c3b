import test from 'ava';
import { NatsPermissionError } from '../../src/errors.js';
import { createLogger } from '../../src/log/logger.js';

test('an error logged under err keeps its class, code, stack and cause', (t) => {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('info', 'test', { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  const cause = new Error('Permissions Violation for Publish to "$JS.API.STREAM.INFO.X"');
  log.warn({ err: new NatsPermissionError('this NATS user may not read stream X', { cause }) }, 'refused');
  const err = lines[0]?.err as { type: string; code: string; message: string; stack: string };
  t.is(err.type, 'NatsPermissionError');
  t.is(err.code, 'NATS_PERMISSION');
  t.regex(err.message, /^this NATS user may not read stream X: Permissions Violation for Publish/);
  t.regex(err.stack, /NatsPermissionError: this NATS user may not read stream X\n\s+at [\s\S]*caused by: Error: Permissions Violation/);
});
