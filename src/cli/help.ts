export type Mode = 'agent' | 'exporter' | 'up' | 'record' | 'hindsight' | 'nats-auth' | 'view' | 'alert' | 'status' | 'setup';

const common = (mode: Mode, natsDefault: string): string => `  --config FILE      config file (default: config/${mode}.toml shipped with rezolus)
  --nats URL         NATS server URL(s), comma-separated (env REZOLUS_NATS_URL; default ${natsDefault})
  --log-level LEVEL  fatal, error, warn, info, debug, trace or silent (default info)
  -h, --help         this text
`;
const NATS_DEFAULT = 'nats://127.0.0.1:4222';
/** record and hindsight snapshot read no config file: credentials and TLS come from the environment */
const ONE_SHOT_SECURITY = `                     credentials and TLS: REZOLUS_NATS_USER, _PASSWORD, _NKEY_SEED_FILE,
                     _TLS_CA, _TLS_CERT, _TLS_KEY, _INBOX_PREFIX (REZOLUS_NATS_ each)`;

export const HELP: Record<Mode | 'main', string> = {
  alert: `Usage: rezolus alert [options]           the evaluator, until Ctrl-C
       rezolus alert check FILE...      validate rule files (exit 2 naming file, rule and key)
       rezolus alert events [--since 1h] [--until T] [--hosts P]
                                        the events, one line each, then new ones as they come

Evaluates the rules of config/alerts.toml over the live frames of the bus
(every host, or --hosts) every second. Each rule reduces a window of one
metric (p99 of a histogram's events, the rate or the burst rate of a
counter, min/max/avg/last of a gauge, or the age of the last frame) and
compares it with a threshold in human units ("1ms", "90%", "10MiB/s").
An alert goes inactive -> pending -> firing (after "for") -> resolved
(after "keep_firing_for" below "clear"), or stale when its frames stop.
Each transition is one JSON event on rezolus.alerts.<host>.<rule> in the
stream REZOLUS_ALERTS (30 days), stored once however many evaluators run;
the state is kept in the KV bucket rezolus_alert_state, so a restarted
evaluator goes on where it was and two can run side by side (HA).
When an alert fires, the host's frames from before it started to after it
fired are written to incidents/<host>/<rule>-<time>.parquet, and an event
names the file. With [alertmanager] urls, firing and resolved alerts are
posted to Alertmanager. Follow events with: rezolus alert events.

Options:
  --hosts PATTERN    "*" (default) or a comma-separated list of hosts and globs
  --stream NAME      the frames stream captures read (default REZOLUS)
  -o, --output DIR   directory of incident captures (default [capture] dir, incidents)
  --since WHEN       events: from WHEN, a duration ago (30m) or an RFC 3339 time (default 1h)
  --until WHEN       events: up to WHEN, then exit (default: follow new events until Ctrl-C)
${common('alert', "up's private server here, else nats://127.0.0.1:4222").replace('config/alert.toml', 'config/alerts.toml')}`,
  status: `Usage: rezolus status [--hosts PATTERN] [--json] [options]

The fleet at a glance, read from the bus in a few requests whatever its
size: one row per host (problems first: silent, stopped, a failed
sampler, firing alerts), with its last frame's age, the messages the
stream holds of it (a bundle of a tick's frames counts once), its
samplers ok/failed/off (from the agent's status record in KV
rezolus_status; ok = active or degraded, "25 (1 degraded)" when some
are degraded; off = disabled or unsupported), its alerts (KV
rezolus_alert_state) and its agent's version and instance; below it the
failed and degraded samplers with the agent's reason. Then the stream:
the window it holds (oldest and newest message), messages, bytes, its
max_age / max_bytes limits, replicas and cluster leader; then each
durable consumer with its lag (pending + ack pending), redeliveries and
last activity.

A host is silent when its newest frame is older than --silent-after (or
the window has none), stopped when its agent stopped cleanly.

Exit status: 0 when every selected host is fresh and no sampler failed;
1 when a host is silent or stopped, a sampler failed or no host was found,
and when NATS does not answer or the stream does not exist (one line on
stderr); 2 on bad usage.

Options:
  --hosts PATTERN    "*" (default) or host names and globs such as web-*
  --json             the report as JSON instead of the table (below)
  --silent-after DUR a host without a frame for longer is silent (default 30s,
                     as the shipped host_silent alert rule)
  --stream NAME      the stream (default REZOLUS)
  --nats URL         NATS server URL(s), comma-separated (env REZOLUS_NATS_URL; default:
                     npm start's private server, from ./data/nats.url, else
                     ${NATS_DEFAULT})
${ONE_SHOT_SECURITY}
  --log-level LEVEL  fatal, error, warn, info, debug, trace or silent (default warn)
  -h, --help         this text

--json fields (snake_case; times RFC 3339 UTC, ages and durations in
seconds, null where there is nothing to tell):
  v (1), at, nats, hosts_selected, silent_after_s, ok (false: exit 1)
  summary       hosts, ok, failed, silent, stopped, alerts_firing, alerts_pending
  hosts[]       host, state (ok | failed | silent | stopped), problem,
                last_frame, last_frame_age_s, frames (messages: a bundle counts once),
                agent {state, version, instance, started, updated, updated_age_s} | null,
                samplers {ok, degraded (how many of ok), failed, off, other} | null,
                sampler_states[] {name, state, reason, error, interval_ms, last_frame_age_s},
                alerts {firing, pending, firing_rules, pending_rules} | null
  stream        name, subjects, messages, bytes, subject_count, first, last,
                window_s, max_age_s, max_bytes, max_msgs_per_subject, replicas,
                cluster {name, leader, replicas[] {name, current, offline, lag, active_s}} | null
  consumers[]   name, durable, filter, lag, pending, ack_pending, redelivered,
                waiting, last_active, last_active_age_s (durable consumers only)
  ephemeral_consumers, notes[] (parts this NATS user could not read)
  hosts_in_stream {count, names (the first 20)} | null: when --hosts matches
                no host, the hosts the stream holds frames of
`,
  view: `Usage: rezolus view [options]                      the live bus: every host
       rezolus view [options] FILE.parquet         a recording or a hindsight dump
       rezolus view [options] A.parquet B.parquet  two recordings compared (or name=path)
       rezolus view [options] http://HOST:4241     one agent's HTTP, polled

A web viewer: a fleet page (one row per host: CPU, run-queue p99, memory,
network, block IO, sampler states, last frame age), and per host a page in
sections (CPU, Memory, Network, Scheduler, Block IO, cgroups, ...):
histograms as percentile lines and bucket heatmaps, counters as rates with
the burst view (the highest per-sample rate in each step), per-CPU
heatmaps. Live, a host's page starts with the stream's whole window and
follows new frames; "save this window" writes the hosts and range on
screen to a Parquet file, as hindsight does. Two files are drawn on shared
axes (seconds from each file's start) with their difference.

It prints the URL to open. It listens on 127.0.0.1 on a free port unless
--listen; any other address needs REZOLUS_HTTP_TOKEN (16+ characters),
then open /login?token=<token> once.

Options:
  --listen HOST:PORT address of the viewer (default 127.0.0.1:0, a free port)
  --interval DUR     agent URL: poll interval; live: row interval of saved
                     files (default 1s)
  --window DUR       live: how far back the pages reach (default: the stream's
                     max_age, 15m unless set); agent URL: what is kept (15m)
  --hosts PATTERN    live: "*" (default) or host names and globs
  --stream NAME      live: the stream to read (default REZOLUS)
  --save-dir DIR     live: where "save this window" writes (default .)
  --nats URL         live: NATS server URL(s) (env REZOLUS_NATS_URL; default:
                     npm start's private server, from ./data/nats.url, else
                     ${NATS_DEFAULT})
${ONE_SHOT_SECURITY}
  --log-level LEVEL  fatal, error, warn, info, debug, trace or silent (default info)
  -h, --help         this text
`,
  'nats-auth': `Usage: rezolus nats-auth --hosts web-1,web-2 [options] > rezolus-auth.conf

Prints a nats-server config fragment: one user per host whose agent may
publish only rezolus.metrics.<host>.> (and its own status and descriptors)
and read only its own replies (_INBOX_<host>.>), plus the users
rezolus-exporter, rezolus-recorder and rezolus-hindsight (read only),
rezolus-alert (alert events and state; may not create them) and
rezolus-admin (creates the streams and the buckets with rezolus setup,
asks hindsight for dumps; agents may not). The admin shares account REZOLUS (JetStream) with the
stream; every other user has an account of its own that imports only what
it uses, so the server's answers to its requests never leave it. Include it
in the server config; kill -HUP the server reloads it.

Options:
  --hosts LIST       comma-separated host names (as the agents' --host)
  --hosts-file FILE  host names, one per line (# comments)
  --nkeys            an nkey pair per user instead of a password; needs --secrets-dir
  --secrets-dir DIR  write each user's password or nkey seed to DIR/<user>.password
                     or DIR/<user>.nk (mode 0600; a user whose file is there keeps its
                     secret, so run again with one more host to add it)
  --stream NAME      the stream (default REZOLUS)
  -h, --help         this text
`,
  main: `rezolus: high-resolution Linux telemetry carried on NATS

Usage: rezolus <mode> [options]

Modes:
  up         the embedded default: a private nats-server, agent, exporter, hindsight, viewer and alerts
  agent      sample this host and publish a tick's frames to rezolus.metrics.<host>._bundle
  exporter   serve Prometheus /metrics for one host, a list of hosts or the fleet
  record     record hosts live from the bus (or a past window) into a Parquet file
  hindsight  dump the last minutes of the stream to a Parquet file on demand (or once: snapshot)
  view       a web viewer: the live fleet, a recording, two recordings compared, or an agent
  alert      evaluate alert rules over the live frames; events, state for HA, incident files
  status     the fleet at a glance: hosts, last frame, samplers, alerts, the stream, consumers' lag
  nats-auth  print nats-server users and permissions for a list of hosts (one user per host)
  setup      create or update the stream and buckets once, as the admin, and exit

Run "rezolus <mode> --help" for the options of a mode, "rezolus --version" for the version.
An option given twice is an error (exit 2), except the lists --hosts and --nats,
whose values are joined (--hosts a --hosts b is --hosts a,b).
`,
  setup: `Usage: rezolus setup [--config FILE] [--alerts FILE] [options]

Creates, or brings to the configured settings, what the fleet's processes
need on the NATS server and a per-host or per-role user of rezolus
nats-auth may not create: the frames stream ([stream] name, REZOLUS, and
its limits from the agents' config) with the descriptor and status KV
buckets, and with --alerts the alert events stream REZOLUS_ALERTS and the
bucket rezolus_alert_state (from that file's [general]). Prints a line
per object as it is ready: created, updated (each limit, old -> new) or
unchanged, then exits 0. One that this NATS user may not create or
change, or a stream of that name rezolus cannot use (other subjects,
storage, retention or discard), stops it with one line (exit 1). Waits
up to 2 minutes for JetStream to answer (a cluster electing a leader).
Nothing is published and no host's status written. Run it once with the
admin's credentials before the agents, and again after changing those
settings or after the server lost its store.

Options:
  --config FILE      the agents' config, for [stream] and [nats] (default: config/agent.toml shipped with rezolus)
  --alerts FILE      the evaluators' rules file, for the alert stream and bucket (default: none made)
  --nats URL         NATS server URL(s), comma-separated (env REZOLUS_NATS_URL; default: [nats] url,
                     else up's private server here, else nats://127.0.0.1:4222)
${ONE_SHOT_SECURITY.replace('credentials and TLS:', 'credentials and TLS: [nats] in --config, or')}
  --log-level LEVEL  fatal, error, warn (default), info, debug, trace or silent
  -h, --help         this text
`,
  agent: `Usage: rezolus agent [options]

Runs every enabled sampler on its interval (aligned to the wall clock) and
publishes cumulative frames to JetStream stream REZOLUS, creating the stream
and the descriptor/status KV buckets when missing (a per-host NATS user of
rezolus nats-auth may not: the admin creates them once, the agent checks).
Keeps publishing through NATS outages from a bounded buffer ([buffer]
max_bytes).

Kernel samplers (eBPF histograms of scheduler, syscall, block I/O, network,
TCP and file system latency; perf counters) need root and a kernel with BTF;
npm start / npm run build:native builds them. [kernel] in the config turns
them off. Each sampler's state (active, degraded, disabled, unsupported,
failed) and why is logged at start, kept in KV rezolus_status and published
as rezolus_sampler_state.

Options:
  --host NAME        host name in subjects and labels (default: hostname)
  --interval DUR     refresh interval of every sampler, e.g. 100ms, 1s (default per sampler, 1s)
  --procfs DIR       procfs root (default /proc)
  --sysfs DIR        sysfs root (default /sys)
${common('agent', NATS_DEFAULT)}`,
  exporter: `Usage: rezolus exporter [options]

Follows frames live from the bus and serves them as Prometheus text, a host
label on every series: counters with _total and base units, gauges,
histograms as percentile gauges over the last interval (and, with
[prometheus] histograms = true, as Prometheus histograms), and for the
counters in [oversample] metrics the percentiles of their per-sample rate
within the last interval (<family>_rate), which show bursts that the
interval average hides. Set --interval to the Prometheus scrape interval.

Options:
  --listen HOST:PORT where to serve /metrics (default 0.0.0.0:4242)
  --hosts PATTERN    "*" for the fleet, or a comma-separated list of hosts and globs
                     such as web-* (default *)
  --interval DUR     window of percentiles and rates: the scrape interval (default 1s)
${common('exporter', NATS_DEFAULT)}`,
  up: `Usage: rezolus up [options]

The embedded default (npm start runs it): everything below in this one
process, until Ctrl-C; it prints the URLs when it is up.

What it starts, where, and how to leave it out:
  nats-server  a private "nats-server -js" on 127.0.0.1:4222, or on a free port
               when something else holds 4222 (--nats-port N insists on N); its
               store and log under --data-dir (./data), its URL in ./data/nats.url.
               It never uses a server it did not start. One up per data directory
               (a second is refused with the first one's pid); if the server dies,
               up starts it again on the same store and port, and exits 1 when it
               cannot. Off: --nats URL (or
               REZOLUS_NATS_URL, or [nats] url in up.toml) uses that server instead
  agent        this host's samplers (config/agent.toml), frames to stream REZOLUS
               (rezolus.metrics.<host>.>); its snapshot on http://127.0.0.1:4241
               (/metrics/binary, /metrics/json; off: [http] enabled = false in the
               agent.toml that up.toml's agent_config names). Always on
  exporter     Prometheus text on http://0.0.0.0:4242/metrics (--listen). Always on
  hindsight    http://127.0.0.1:4243 (--hindsight-listen): POST /dump, or
               kill -HUP <pid>, writes the stream's last 15 min to
               hindsight.parquet (config/hindsight.toml). Always on
  viewer       a web dashboard on 127.0.0.1, a free port (--view-listen HOST:PORT);
               off loopback it needs REZOLUS_HTTP_TOKEN. Off: --view-listen off
  alerts       the alert evaluator over config/alerts.toml (run-queue latency, CPU
               throttling, TCP retransmits, memory, block IO, a silent host, a
               failed sampler): events on rezolus.alerts.> (stream REZOLUS_ALERTS),
               incident files in ./incidents. Off: --alerts off

Options:
  --data-dir DIR     store of the private nats-server (default ./data)
  --nats-port PORT   port of the private nats-server, no fallback (0 = any free port)
  --host NAME        host name (default: hostname)
  --interval DUR     interval of every sampler (default: agent.toml's, 1s, with the
                     burst view's samplers at up.toml's oversample_interval, 100ms)
  --scrape-interval DUR  exporter window = your Prometheus scrape interval (default 1s)
  --listen HOST:PORT exporter address (default 0.0.0.0:4242)
  --hindsight-listen HOST:PORT  hindsight service address (default 127.0.0.1:4243)
  --view-listen HOST:PORT|off  viewer address (default 127.0.0.1 on a free port);
                     off: no viewer
  --hosts PATTERN    hosts the exporter shows (default: this host; up ignores hosts in exporter.toml)
  --alerts FILE|off  alert rules the evaluator runs (default config/alerts.toml); off:
                     no evaluator
${common('up', 'none: a private server')}`,
  record: `Usage: rezolus record [options] [-- command args]
       rezolus record [options] http://HOST:4241 [OUTPUT.parquet]

Follows the selected hosts live from the bus and writes a Parquet file when
the recording ends (--duration, Ctrl-C or SIGTERM): one row per host per
interval, every series a column named metric/label values (cpu_usage/user/3),
values as of the row time (counters and histograms are cumulative, so
nothing is lost). With --since it records a past window from the JetStream
stream instead, at read speed. With a command after --, it records exactly
the command's lifetime: the command runs in its own process group and
rezolus exits with its status (128 + signal when killed); --duration then
caps the command (SIGTERM to its group, SIGKILL 2 s later, exit 124).
A command that ends before the first row (shorter than the agents'
interval) leaves no file: rezolus says so and exits with the command's
status, or 1 when that was 0. Nothing recorded otherwise exits 1.
Given an agent URL, it polls that agent's /metrics/binary instead of using
NATS, in step with the agent's refreshes, and takes every frame once: the
file has the rows stamped within --duration from the agent's first answer
(10 s at 1 s: 10 rows); it ends once the agent has made the last row's
frames (waiting up to 2 intervals, at least 2 s, past the end for them).

Options:
  --interval DUR     row interval (default 1s)
  --duration DUR     record the frames that ended within this long (default:
                     until Ctrl-C); frames of it still on the way at the end (a
                     fleet that is behind) are waited for, up to 2 intervals
                     (at least 2 s) plus how late frames have been coming
  --since WHEN       replay from the stream, from WHEN: a duration ago (10m) or
                     an RFC 3339 time (2026-11-22T10:00:00Z)
  --until WHEN       end of the replayed window (default: now)
  --stream NAME      the stream to replay from (default REZOLUS)
  --durable NAME     record from the stream through durable consumer NAME, each
                     frame kept in OUTPUT.spool (fsynced) before it is acked: a
                     recorder killed even with SIGKILL resumes when the same
                     command runs again, and the file has every row once. The
                     window (--duration, or --since/--until; default: until
                     Ctrl-C) is fixed at the first start. Not with -- command
  --host NAME        the host to record (default: this host)
  --hosts PATTERN    "*" for the fleet, or host names and globs such as web-*
  -o, --output FILE  the .parquet file (default rezolus.parquet); written under a
                     temporary name and renamed when complete
  --nats URL         NATS server URL(s), comma-separated (env REZOLUS_NATS_URL; default:
                     npm start's private server, from ./data/nats.url, else
                     ${NATS_DEFAULT})
${ONE_SHOT_SECURITY}
  --log-level LEVEL  fatal, error, warn, info, debug, trace or silent (default info)
  -h, --help         this text
`,
  hindsight: `Usage: rezolus hindsight [options]
       rezolus hindsight snapshot [options]

The service: on SIGHUP, POST /dump (HTTP, loopback by default) or a NATS
request to rezolus.control.hindsight.dump, it writes the last [general]
duration (default 15m) of the configured hosts, as the JetStream stream keeps
them (the hindsight buffer), to [general] output, atomically, and keeps
running. A trigger during a dump is queued, not lost. GET /status reports the
window the stream holds. It refuses a duration beyond the stream's max_age.

snapshot writes the last --last once, like "rezolus record --since".

Service options:
  --config FILE      config file (default: config/hindsight.toml shipped with rezolus)
  --listen HOST:PORT HTTP address (default 127.0.0.1:4243)
  --hosts PATTERN    "*" for the fleet, or host names and globs such as web-*
  --interval DUR     row interval (default 1s)
  -o, --output FILE  the .parquet file a dump writes (default hindsight.parquet)

Snapshot options:
  --last DUR         how far back (default 15m; at most the stream's max_age)
  --host NAME        the host (default: this host), or --hosts PATTERN
  --interval DUR     row interval (default 1s)
  -o, --output FILE  the .parquet file (default hindsight.parquet)
  --stream NAME      the stream (default REZOLUS)

Both:
  --nats URL         NATS server URL(s), comma-separated (env REZOLUS_NATS_URL; snapshot's
                     default: the private server of npm start in ./data/nats.url, else
                     ${NATS_DEFAULT})
${ONE_SHOT_SECURITY}
  --log-level LEVEL  fatal, error, warn, info, debug, trace or silent (default info)
  -h, --help         this text
`,
};
