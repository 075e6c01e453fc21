#!/usr/bin/env bash
# CI's image step: builds deploy/Containerfile without a daemon (buildah, on a base made from Debian's
# packages), runs every process of the suite from it with podman on loopback against the Postgres and
# NATS given, checks the operator path and a LITE session through the gateway (watched over WHEP), prints the image size and
# each process's RSS 3 s after start, and stops everything. Exits non-zero on any failure.
#   deploy/image/ci-image.sh build                      the base and the image
#   deploy/image/ci-image.sh run POSTGRES_URL NATS_URL   run the image built before, smoke test
# (POSTGRES_URL: a database the script may fill; NATS with JetStream.)
set -euo pipefail
cd "$(dirname "$0")/../.."
MODE=${1:-}
case "$MODE" in
  build) ;;
  run) DATABASE_URL=$2 NATS_URL=$3 ;;
  *) echo "usage: $0 build | run POSTGRES_URL NATS_URL" >&2; exit 2 ;;
esac
IMAGE=localhost/avatar-session-service:ci
PIPELINE_IMAGE=localhost/avatar-session-service-pipeline:ci
PREFIX=avatar-ci-$$
WORK=$(mktemp -d)
# This sandbox lets no container raise its limits and has hybrid cgroups (crun refuses them): the
# containers get lower limits and run under runc. Ordinary hosts need none of this.
cat >"$WORK/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=10000:10000", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$WORK/containers.conf"
started=()
cleanup() {
  for c in "${started[@]}"; do podman rm -f -t 1 "$c" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
say() { printf '%s\n' "$*"; }

if [ "$MODE" = build ]; then
say "--- base image (Debian bookworm from Debian's packages + Node from npm's node package)"
BASE=$(deploy/image/node-base.sh)
say "$BASE: $(podman run --rm "$BASE" node --version)"

CA=/etc/ssl/certs/ca-certificates.crt
ca_args=()
[ -s "$CA" ] && ca_args=(--volume "$CA:/etc/ssl/certs/host-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca.crt)
build_target() { # build_target TARGET TAG: one stage of the Containerfile (the second reuses the build stage)
  local build_start=$SECONDS
  say "--- build $2 (--target $1)"
  buildah build --quiet --network host --layers \
    --ignorefile deploy/Containerfile.dockerignore -f deploy/Containerfile --target "$1" \
    --build-arg NODE_IMAGE="$BASE" "${ca_args[@]}" -t "$2" . >"$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log"; say "image build failed"; exit 1; }
  say "built in $((SECONDS - build_start)) s"
}
build_target runtime "$IMAGE"
build_target pipeline "$PIPELINE_IMAGE"
fi
for image in "$IMAGE" "$PIPELINE_IMAGE"; do
  podman image exists "$image" || { say "no image $image: run '$0 build' first"; exit 1; }
  size=$(podman image inspect --format '{{.Size}}' "$image")
  say "image size: $((size / 1024 / 1024)) MiB ($image${BASE:+, base $BASE})"
  say "runs as: $(podman image inspect --format '{{.Config.User}}' "$image"), node $(podman run --rm "$image" node --version)"
done
say "the pipeline's encoder: $(podman run --rm "$PIPELINE_IMAGE" sh -c '"$FFMPEG_PATH" -version' | head -1)"
[ "$MODE" = build ] && exit 0

say "--- run every process from the image (podman, host loopback)"
SET=$(podman run --rm "$IMAGE" node tools/avatarctl/dist/main.js identity generate)
key() { printf '%s\n' "$SET" | sed -n "s/^$1=//p"; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
declare -A PORTS
for name in tokens sessions catalog agents memory pipeline webhooks gateway; do PORTS[$name]=$(free_port); done
url_env=()
for name in tokens sessions catalog agents memory pipeline webhooks; do
  url_env+=(-e "${name^^}_URL=http://127.0.0.1:${PORTS[$name]}")
done
common=(--network host --read-only --tmpfs /tmp --user 1000:1000 --security-opt no-new-privileges
  -e HOST=127.0.0.1 -e NATS_URL="$NATS_URL" -e NATS_NAMESPACE="ci$$" -e DATA_DIR=/tmp/avatar
  -e ENCRYPTION_KEYS="ci:$(head -c 32 /dev/urandom | base64)" -e SERVICE_IDENTITY_PUBLIC_KEYS="$(key public-keys)"
  "${url_env[@]}")
# As the manifests run them (tools/build/src/node-flags.ts): every bundle's flags, asked for once.
declare -A NODE_FLAGS_OF
while read -r entry flags; do NODE_FLAGS_OF[$entry]=$flags; done < <(node --import tsx --input-type=module -e '
  import { nodeFlagsFor } from "./tools/build/src/node-flags.ts";
  import { PROCESSES } from "./tools/build/src/processes.ts";
  for (const { dir } of PROCESSES) console.log(`${dir}/dist/main.js`, nodeFlagsFor(`${dir}/dist/main.js`).join(" "));')
run_process() { # run_process NAME ENTRY [ENV...]
  local name=$1 entry=$2 image=$IMAGE; shift 2
  local flags=${NODE_FLAGS_OF[$entry]:?no node flags for $entry}
  [ "$name" = pipeline ] && image=$PIPELINE_IMAGE
  podman run -d --name "$PREFIX-$name" "${common[@]}" -e PORT="${PORTS[$name]}" \
    -e SERVICE_IDENTITY_KEY="$(key "$name")" "$@" "$image" node $flags "$entry" >/dev/null
  started+=("$PREFIX-$name")
}
for name in tokens catalog agents memory sessions pipeline webhooks; do
  run_process "$name" "services/$name/dist/main.js" -e DATABASE_URL="$DATABASE_URL"
done
run_process gateway gateway/dist/main.js
ready() { curl -fsS -o /dev/null "http://127.0.0.1:$1/readyz" 2>/dev/null; }
for name in tokens catalog agents memory sessions pipeline webhooks gateway; do
  for _ in $(seq 120); do ready "${PORTS[$name]}" && break; sleep 0.5; done
  if ! ready "${PORTS[$name]}"; then
    say "$name is not ready:"; podman logs "$PREFIX-$name" 2>&1 | tail -20; exit 1
  fi
done
say "all eight processes ready"

say "--- RSS per process 3 s after start (start-up garbage included: V8 collects it after ~20 s at rest)"
sleep 3
for name in gateway tokens sessions catalog agents memory pipeline webhooks; do
  pid=$(podman inspect --format '{{.State.Pid}}' "$PREFIX-$name")
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  printf '  %-9s %6d MiB\n' "$name" $((rss / 1024))
done

say "--- internal calls need a service identity"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' -d '{}' \
  "http://127.0.0.1:${PORTS[tokens]}/avatar.tokens.v1.TokensService/ListSpaces")
[ "$code" = 401 ] || { say "an unsigned call to ListSpaces answered $code, not 401"; exit 1; }
say "an unsigned ListSpaces: 401"

say "--- operator: avatarctl from the image creates the first space"
space=$(podman run --rm "${common[@]}" -e SERVICE_IDENTITY_KEY="$(key avatarctl)" "$IMAGE" \
  node tools/avatarctl/dist/main.js space create --name "CI image" --tier pro --credits 10 --json)
api_key=$(printf '%s' "$space" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).api_key))')
[ -n "$api_key" ] || { say "no API key from avatarctl: $space"; exit 1; }
space_id=$(printf '%s' "$space" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).space_id))')
say "space created: $space_id"
# Its avatars: the seed catalog's demo avatars, imported privately into the space from a mounted file.
mkdir -p "$WORK/files"
node -e 'console.log(JSON.stringify({ avatars: require("./services/catalog/seed/catalog.json").demo_space_avatars }))' \
  >"$WORK/files/avatars.json"
chmod -R a+rX "$WORK"
podman run --rm "${common[@]}" -e SERVICE_IDENTITY_KEY="$(key avatarctl)" -v "$WORK/files:/files:ro" "$IMAGE" \
  node tools/avatarctl/dist/main.js import avatars /files/avatars.json --space "$space_id" >"$WORK/imported.txt"
head -1 "$WORK/imported.txt"

say "--- smoke test through the gateway: mint, start a LITE session, watch it over WHEP, event socket round trip, stop"
smoke_logs() { for c in gateway sessions pipeline; do say "== $c"; podman logs "$PREFIX-$c" 2>&1 | tail -15; done; }
pnpm --silent session-client --key "$api_key" --url "http://127.0.0.1:${PORTS[gateway]}" --mode LITE \
  --record "$WORK/smoke.mkv" | tee "$WORK/smoke.txt" || { smoke_logs; exit 1; }
# The viewer's offer got an answer and the avatar's video and voice arrived (session-client's summary).
grep -Eq '^recorded [1-9][0-9]* video frames and [1-9][0-9]* audio packets' "$WORK/smoke.txt" \
  || { say "the WHEP viewer received no video or no audio"; smoke_logs; exit 1; }

say "--- graceful stop (SIGTERM): every process exits 0"
for name in gateway pipeline webhooks sessions memory agents catalog tokens; do
  podman stop -t 20 "$PREFIX-$name" >/dev/null
  status=$(podman inspect --format '{{.State.ExitCode}}' "$PREFIX-$name")
  [ "$status" = 0 ] || { say "$name exited $status"; podman logs "$PREFIX-$name" 2>&1 | tail -10; exit 1; }
done
say "image step passed"
