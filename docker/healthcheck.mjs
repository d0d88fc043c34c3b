// Container healthcheck of the rezolus services (docker/compose.yaml), for an image without curl:
//   node /opt/rezolus/docker/healthcheck.mjs URL
// Exit 0 when URL answers 2xx within 5 s, 1 otherwise (one line on stderr saying why). Sends
// REZOLUS_HTTP_TOKEN as a bearer token when it is set: hindsight and the viewer need it off loopback.
const url = process.argv[2];
if (url === undefined) {
  process.stderr.write('usage: healthcheck.mjs URL\n');
  process.exit(2);
}
const token = process.env.REZOLUS_HTTP_TOKEN ?? '';
try {
  const res = await fetch(url, {
    headers: token === '' ? {} : { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(5000),
  });
  await res.arrayBuffer();
  if (!res.ok) {
    process.stderr.write(`${url}: HTTP ${res.status}\n`);
    process.exit(1);
  }
} catch (error) {
  const cause = error instanceof Error ? error.cause : undefined;
  process.stderr.write(`${url}: ${String(cause?.code ?? cause?.message ?? error)}\n`);
  process.exit(1);
}
