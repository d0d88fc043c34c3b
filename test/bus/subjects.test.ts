import test from 'ava';
import { frameMsgId, hostFilterSubjects, hostSelector, hostToken, metricsSubject, MsgIdTags, subjectMatches, taggedMsgId } from '../../src/bus/subjects.js';

test('hostToken makes one lower-case subject token', (t) => {
  t.is(hostToken('Web01.Example.com'), 'web01_example_com');
  t.is(hostToken('db-2'), 'db-2');
  t.is(hostToken('a b*>c'), 'a_b__c');
  t.is(hostToken(''), '_');
});

test('metricsSubject and hostFilterSubjects agree on the token', (t) => {
  t.is(metricsSubject('Web01.Example.com', 'cpu_usage'), 'rezolus.metrics.web01_example_com.cpu_usage');
  t.deepEqual(hostFilterSubjects('*'), ['rezolus.metrics.*.>']);
  t.deepEqual(hostFilterSubjects('web01, Web01 ,db.x'), ['rezolus.metrics.web01.>', 'rezolus.metrics.db_x.>']);
  t.throws(() => metricsSubject('h', 'Bad.Name'));
  // the instance as people read it everywhere: 8 hex digits
  t.is(frameMsgId('h.x', 'cpu_usage', 255, 7), 'h_x.cpu_usage.000000ff.7');
});

test('subjectMatches: the frame must name the host and sampler of its subject', (t) => {
  const subject = metricsSubject('Web01.example.com', 'cpu_usage');
  t.true(subjectMatches(subject, 'web01_example_com', 'cpu_usage'), 'the subject\'s host token, as the agent publishes it');
  t.false(subjectMatches(subject, 'web02', 'cpu_usage'), 'another host');
  t.false(subjectMatches(subject, 'web01_example_com', 'memory_meminfo'), 'another sampler');
  t.false(subjectMatches('rezolus.metrics.web01', 'web01', ''), 'no sampler token');
});

test('subjectMatches: the host is the subject\'s token exactly, not a name that makes it', (t) => {
  const subject = metricsSubject('h5', 'cpu_usage');
  t.true(subjectMatches(subject, 'h5', 'cpu_usage'));
  // H5 makes the token h5, but would be keyed, labelled and recorded as another host
  t.is(hostToken('H5'), 'h5');
  t.false(subjectMatches(subject, 'H5', 'cpu_usage'));
  const dotted = metricsSubject('Web-1.example.com', 'cpu_usage');
  t.is(dotted, 'rezolus.metrics.web-1_example_com.cpu_usage');
  t.true(subjectMatches(dotted, 'web-1_example_com', 'cpu_usage'));
  for (const variant of ['Web-1.example.com', 'web-1.example.com', 'WEB-1_EXAMPLE_COM', 'web-1 example com', 'web-1/example/com', 'Web-1.Example.Com']) {
    t.is(hostToken(variant), 'web-1_example_com', `${variant} makes the token`);
    t.false(subjectMatches(dotted, variant, 'cpu_usage'), `${variant} is not the token`);
  }
});

test('subjectMatches: host and sampler cannot split the subject another way', (t) => {
  // a user of host a may publish anything under rezolus.metrics.a.>: a frame must not claim host "a.b"
  t.false(subjectMatches('rezolus.metrics.a.b.c', 'a.b', 'c'), 'a host with a dot');
  t.false(subjectMatches('rezolus.metrics.a.b.c', 'a', 'b.c'), 'a sampler with a dot');
  t.false(subjectMatches('rezolus.metrics.a.b', 'a', 'B'), 'a sampler in upper case');
  t.false(subjectMatches('rezolus.metrics..b', '', 'b'), 'an empty host');
  t.true(subjectMatches('rezolus.metrics._.b', '_', 'b'), 'the token of an empty host name');
});

test('host globs: the fleet subject, then a selector on host tokens', (t) => {
  t.deepEqual(hostFilterSubjects('web-*'), ['rezolus.metrics.*.>']);
  t.deepEqual(hostFilterSubjects('db1, web-*'), ['rezolus.metrics.*.>']);
  t.is(hostSelector('*'), undefined);
  t.is(hostSelector('web01,db1'), undefined, 'plain names: the subjects select exactly');
  const pick = hostSelector('Web-*.example.com, db*')!;
  t.true(pick(hostToken('web-01.example.com')));
  t.true(pick('web-_example_com'), '* also matches nothing');
  t.false(pick(hostToken('web-01.example.org')));
  t.true(pick('db'));
  t.true(pick('db-7'));
  t.false(pick('xdb'), 'anchored');
  t.false(pick('web01'));
  const mid = hostSelector('a*z')!;
  t.true(mid('abcz'));
  t.false(mid('abc'));
});

test('message id tags: 16 hex digits each, none repeated across pool refills, none shared between two publishers', (t) => {
  const a = new MsgIdTags();
  const b = new MsgIdTags();
  // 2000 draws cross the 512-tag pool three times
  const drawn = Array.from({ length: 2000 }, () => a.next());
  for (const tag of drawn) t.regex(tag, /^[0-9a-f]{16}$/);
  t.is(new Set(drawn).size, drawn.length);
  const other = new Set(Array.from({ length: 2000 }, () => b.next()));
  t.false(drawn.some((x) => other.has(x)));
  t.is(taggedMsgId('h1.cpu_usage.0000002a.', 7, drawn[0] as string), `h1.cpu_usage.0000002a.7.${drawn[0]}`);
});
