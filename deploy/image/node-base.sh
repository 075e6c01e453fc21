#!/usr/bin/env bash
# Makes the base image the Containerfile builds FROM where no registry can be reached: a Debian bookworm
# root filesystem from Debian's packages (mmdebstrap) with Node.js from npm's node-linux-<arch> package
# and npm from npm's own package, imported into the local container storage (podman import). Elsewhere
# the Containerfile builds FROM the official node image instead (NODE_IMAGE build argument).
#   deploy/image/node-base.sh [NODE_VERSION]    prints the image name (localhost/avatar-node-base:<version>)
# The root filesystem is cached under ${IMAGE_CACHE:-/var/cache/avatar-image} by version and day.
set -euo pipefail
NODE_VERSION=${1:-24.21.0}
NPM_VERSION=${NPM_VERSION:-11.21.2}
IMAGE="localhost/avatar-node-base:${NODE_VERSION}"
CACHE=${IMAGE_CACHE:-/var/cache/avatar-image}
case "$(uname -m)" in
  x86_64) ARCH=x64 ;;
  aarch64) ARCH=arm64 ;;
  *) echo "no Node.js package for $(uname -m)" >&2; exit 1 ;;
esac
if podman image exists "$IMAGE"; then echo "$IMAGE"; exit 0; fi

mkdir -p "$CACHE"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
TAR="$CACHE/node-base-${NODE_VERSION}-${ARCH}-$(date -u +%Y%m%d).tar"
if [ ! -s "$TAR" ]; then
  # The binaries: npm's node-linux-<arch> carries Node's official build; npm's package bundles npm.
  (cd "$WORK" && npm pack --silent "node-linux-${ARCH}@${NODE_VERSION}" "npm@${NPM_VERSION}" >/dev/null)
  mkdir -p "$WORK/node/bin" "$WORK/node/lib/node_modules/npm"
  tar -xzf "$WORK/node-linux-${ARCH}-${NODE_VERSION}.tgz" -C "$WORK" package/bin/node
  mv "$WORK/package/bin/node" "$WORK/node/bin/node"
  rm -rf "$WORK/package"
  tar -xzf "$WORK/npm-${NPM_VERSION}.tgz" -C "$WORK/node/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$WORK/node/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$WORK/node/bin/npx"
  # The official image's layout: node and npm under /usr/local, a `node` user 1000.
  mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook="copy-in $WORK/node/bin /usr/local" \
    --customize-hook="copy-in $WORK/node/lib /usr/local" \
    --customize-hook='chroot "$1" groupadd --gid 1000 node' \
    --customize-hook='chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
    --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*' \
    --format=tar bookworm "$TAR.partial" http://deb.debian.org/debian
  mv "$TAR.partial" "$TAR"
fi
podman import --quiet \
  --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=${NODE_VERSION}" \
  --change 'CMD ["node"]' \
  "$TAR" "$IMAGE" >/dev/null
echo "$IMAGE"
