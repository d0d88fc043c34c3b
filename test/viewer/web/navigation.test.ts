import test from 'ava';
import { formatClock, formatRange, timeTicks } from '../../../src/viewer/web/clock.js';
import { formatRoute, parseRoute, type Route } from '../../../src/viewer/web/route.js';
import { MIN_ZOOM_MS, ViewRange } from '../../../src/viewer/web/view-range.js';

test('routes: parse what format writes', (t) => {
  const routes: Route[] = [
    { page: 'fleet' },
    { page: 'host', hosts: ['web01'] },
    { page: 'host', hosts: ['web 01', 'db/2'], section: 'Block IO', from: 1000, to: 5000 },
    { page: 'compare', a: 'x', b: 'y', section: 'CPU', from: 0, to: 60_000 },
    { page: 'compare' },
  ];
  for (const r of routes) t.deepEqual(parseRoute(formatRoute(r)), r, formatRoute(r));
  t.is(formatRoute({ page: 'host', hosts: ['a'], section: 'CPU' }), '#/host?h=a&s=CPU');
});

test('routes: anything else is home, a host page without a host is the fleet, a bad zoom is dropped', (t) => {
  t.deepEqual(parseRoute(''), { page: 'home' });
  t.deepEqual(parseRoute('#/'), { page: 'home' });
  t.deepEqual(parseRoute('#/nope'), { page: 'home' });
  t.deepEqual(parseRoute('#/host'), { page: 'fleet' });
  t.deepEqual(parseRoute('#/host?h=a&h=b&h=c'), { page: 'host', hosts: ['a', 'b'] });
  t.deepEqual(parseRoute('#/host?h=a&from=5&to=2'), { page: 'host', hosts: ['a'] });
  t.deepEqual(parseRoute('#/host?h=a&from=x&to=2'), { page: 'host', hosts: ['a'] });
  t.deepEqual(parseRoute('#/fleet/'), { page: 'fleet' });
});

test('view range: a file shows its extent, zooms stay inside it and at least a second wide', (t) => {
  const r = new ViewRange({ start: 0, end: 100_000 }, false);
  t.deepEqual(r.visible(), { start: 0, end: 100_000 });
  t.false(r.following);
  t.deepEqual(r.zoomTo(30_000, 10_000), { start: 10_000, end: 30_000 });
  t.true(r.zoomed);
  t.deepEqual(r.zoomTo(5000, 5100), { start: 5050 - MIN_ZOOM_MS / 2, end: 5050 + MIN_ZOOM_MS / 2 });
  t.deepEqual(r.zoomTo(-5000, 5000), { start: 0, end: 10_000 });
  t.deepEqual(r.zoomTo(95_000, 120_000), { start: 75_000, end: 100_000 });
  r.reset();
  t.deepEqual(r.visible(), { start: 0, end: 100_000 });
});

test('view range: live follows the moving window until zoomed, and again after a reset', (t) => {
  const r = new ViewRange({ start: 0, end: 60_000 }, true);
  t.true(r.following);
  r.setExtent({ start: 1000, end: 61_000 });
  t.deepEqual(r.visible(), { start: 1000, end: 61_000 });
  r.zoomTo(10_000, 20_000);
  t.false(r.following);
  r.setExtent({ start: 50_000, end: 110_000 });
  // the zoom holds still even when the window has moved past it
  t.deepEqual(r.visible(), { start: 10_000, end: 20_000 });
  r.reset();
  t.true(r.following);
  t.deepEqual(r.visible(), { start: 50_000, end: 110_000 });
});

test('clock: local times, the date once per day on the axis', (t) => {
  const ms = new Date(2026, 0, 2, 3, 4, 5).getTime();
  t.is(formatClock(ms, true), '2026-01-02 03:04:05');
  t.is(formatClock(ms, false), '03:04:05');
  t.is(formatRange(ms, ms + 15 * 60_000), '2026-01-02 03:04:05 – 03:19:05 (15 min)');
  t.is(formatRange(ms, ms + 86_400_000), '2026-01-02 03:04:05 – 2026-01-03 03:04:05 (1 d)');
  const midnight = new Date(2026, 0, 2, 23, 58, 0).getTime() / 1000;
  t.deepEqual(timeTicks([midnight, midnight + 60, midnight + 120], 60), ['23:58\n2026-01-02', '23:59', '00:00\n2026-01-03']);
  t.deepEqual(timeTicks([midnight, midnight + 30], 30), ['23:58:00\n2026-01-02', '23:58:30']);
});
