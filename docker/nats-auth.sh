#!/bin/sh
# NATS users for docker/compose.yaml, from `rezolus nats-auth`:
#   sh docker/nats-auth.sh HOST [HOST ...]
# HOST: every host whose agent publishes to this cluster; the first is this host (REZOLUS_HOST).
# Writes docker/secrets/auth.conf (the accounts block the three NATS nodes include), one 0600
# password file per user beside it (a user whose file exists keeps its password: adding a host
# is the same command with the longer list), and in docker/.env the file's name
# (REZOLUS_NATS_AUTH) and the user and password of each service of compose.yaml
# (REZOLUS_<SERVICE>_NATS_USER and _PASSWORD, replacing earlier ones). Then it says how to
# create the stream and buckets once as the admin, which the per-role users may not.
# rezolus runs from the image (REZOLUS_IMAGE, default rezolus-nats) unless REZOLUS names
# another command, e.g. REZOLUS="npx rezolus".
set -eu

if [ "$#" -eq 0 ]; then
  echo "usage: sh $0 HOST [HOST ...]  (the first HOST is this host)" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
secrets="$here/secrets"
env_file="$here/.env"
mkdir -p "$secrets"
chmod 700 "$secrets"

hosts=$(printf '%s,' "$@")
hosts=${hosts%,}
if [ -n "${REZOLUS:-}" ]; then
  # shellcheck disable=SC2086 # REZOLUS is a command with its arguments
  $REZOLUS nats-auth --hosts "$hosts" --secrets-dir "$secrets" > "$secrets/auth.conf.tmp"
else
  docker run --rm --user "$(id -u):$(id -g)" -v "$secrets:/secrets" "${REZOLUS_IMAGE:-rezolus-nats}" \
    nats-auth --hosts "$hosts" --secrets-dir /secrets > "$secrets/auth.conf.tmp"
fi
mv "$secrets/auth.conf.tmp" "$secrets/auth.conf"

# this host's agent user: agent-<host as a subject token> (lower case; anything outside
# [a-z0-9_-] becomes _), as nats-auth names it
token=$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9_-]/_/g')
password() {
  if [ ! -s "$secrets/$1.password" ]; then
    echo "$0: $secrets/$1.password is missing: did nats-auth fail?" >&2
    exit 1
  fi
  cat "$secrets/$1.password"
}

touch "$env_file"
chmod 600 "$env_file"
grep -v -e '^REZOLUS_NATS_AUTH=' -e '^REZOLUS_[A-Z]*_NATS_USER=' -e '^REZOLUS_[A-Z]*_NATS_PASSWORD=' "$env_file" > "$env_file.tmp" || true
{
  echo "REZOLUS_NATS_AUTH=./secrets/auth.conf"
  # service of compose.yaml, then the nats-auth user it runs as (the viewer reads as the recorder)
  for pair in "AGENT agent-$token" "EXPORTER rezolus-exporter" "HINDSIGHT rezolus-hindsight" \
    "VIEW rezolus-recorder" "ALERT rezolus-alert" "ADMIN rezolus-admin"; do
    service=${pair%% *}
    user=${pair#* }
    echo "REZOLUS_${service}_NATS_USER=$user"
    echo "REZOLUS_${service}_NATS_PASSWORD=$(password "$user")"
  done
} >> "$env_file.tmp"
mv "$env_file.tmp" "$env_file"

cat <<DONE
Wrote $secrets/auth.conf and the users of this host's services to $env_file.
Next, from the repository root:
  1. docker compose -f docker/compose.yaml up -d nats-1 nats-2 nats-3
  2. Create the streams and buckets (3 replicas) once as the admin, which the per-role users may
     not (rezolus setup prints a line for each and exits; it publishes nothing):
       docker compose -f docker/compose.yaml run --rm -e REZOLUS_NATS_USER=rezolus-admin \\
         -e REZOLUS_NATS_PASSWORD="\$(cat docker/secrets/rezolus-admin.password)" agent \\
         setup --config /etc/rezolus/cluster/agent.toml --alerts /etc/rezolus/cluster/alerts.toml
  3. docker compose -f docker/compose.yaml up -d
DONE
