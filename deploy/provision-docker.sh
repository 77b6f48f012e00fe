#!/usr/bin/env bash
# Provision a Docker engine and the images the docker sandbox backend runs, offline and
# idempotently: docker.io + debootstrap from apt when missing, a dockerd when no engine answers,
# the base image local/python:3.11 (Debian bookworm minbase with Python 3.11, debootstrapped
# from the mirror apt already uses: no image registry is needed), then the sandbox image built
# FROM it (sandboxes/backends/docker.py; tagged by the hash of what goes into it).
#
# Needs root with apt for the first three steps. Anywhere it cannot provision, it says why and
# exits 0, so CI goes on and the docker tests skip with the backend's own reason.
#
#   deploy/provision-docker.sh            (CI runs it from .ci/run before `make test`)
#   BASE_IMAGE=local/python:3.11 DOCKERD_LOG=/var/log/dockerd.log deploy/provision-docker.sh
set -uo pipefail
cd "$(dirname "$0")/.."

BASE_IMAGE="${ENVFOUNDRY_SANDBOX_BASE_IMAGE:-${BASE_IMAGE:-local/python:3.11}}"
DOCKERD_LOG="${DOCKERD_LOG:-/tmp/envfoundry-dockerd.log}"
SUITE=bookworm
PACKAGES=python3,python3-venv,python3-pip,ca-certificates,sqlite3
started=$SECONDS

skip() {
    echo "provision-docker: $*; the docker tests will skip" >&2
    exit 0
}

engine_answers() {
    command -v docker >/dev/null 2>&1 && timeout 20 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

image_exists() {
    docker image inspect --format '{{.Id}}' "$1" >/dev/null 2>&1
}

# The package list a base image made here was debootstrapped with (a label of the image);
# empty for an image made elsewhere or before the label existed.
PACKAGES_LABEL=org.envfoundry.base-packages
base_packages() {
    docker image inspect --format "{{index .Config.Labels \"$PACKAGES_LABEL\"}}" "$1" 2>/dev/null |
        grep -v '^<no value>$'
}

# The Debian mirror apt uses: the first bookworm (not -security) entry of a deb822 .sources file,
# else of sources.list.
debian_mirror() {
    local file
    for file in /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        awk -v suite="$SUITE" '
            /^URIs:/ { uri = $2 }
            /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) found = uri }
            /^$/ { if (found) { print found; exit } uri = "" }
            END { if (found) print found }
        ' "$file" | head -n 1
    done | head -n 1 | grep . && return 0
    awk -v suite="$SUITE" '$1 == "deb" && $0 ~ " " suite " " {
        for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
        /etc/apt/sources.list 2>/dev/null | head -n 1 | grep .
}

is_root_with_apt() {
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

# 1. The engine: a running one is used as is (DOCKER_HOST included); else install and start it.
if ! engine_answers; then
    is_root_with_apt || skip "no Docker engine answers and this is not root with apt"
    missing=()
    command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
    command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "provision-docker: installing ${missing[*]}"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } \
            >/dev/null || skip "could not install ${missing[*]}"
    fi
    echo "provision-docker: starting dockerd (log $DOCKERD_LOG)"
    setsid nohup dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null &
    for _ in $(seq 1 60); do
        engine_answers && break
        sleep 1
    done
    engine_answers || skip "dockerd did not answer within 60 s (see $DOCKERD_LOG)"
fi
echo "provision-docker: engine $(docker version --format '{{.Server.Version}}' 2>/dev/null) answers"

# 2. The base image, from a debootstrapped root file system. One made here with another package
# list (an older checkout's: say without sqlite3, which project tasks run) is made again, so a
# machine that keeps its images between runs does not test against a stale base. A base made
# elsewhere and named by ENVFOUNDRY_SANDBOX_BASE_IMAGE is the user's: used as it is.
rebuild=0
if image_exists "$BASE_IMAGE"; then
    made_with="$(base_packages "$BASE_IMAGE")"
    if [ "$made_with" != "$PACKAGES" ] &&
        { [ -n "$made_with" ] || [ "$BASE_IMAGE" = local/python:3.11 ]; }; then
        echo "provision-docker: base image $BASE_IMAGE was made with" \
            "${made_with:-an unlabelled package list}; making it again with $PACKAGES"
        rebuild=1
    fi
fi
if [ "$rebuild" = 1 ] || ! image_exists "$BASE_IMAGE"; then
    is_root_with_apt || skip "the base image $BASE_IMAGE is missing or stale and this is not root with apt"
    if ! command -v debootstrap >/dev/null 2>&1; then
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } \
            >/dev/null || skip "could not install debootstrap"
    fi
    mirror="$(debian_mirror)" || skip "no Debian $SUITE mirror found in apt's sources"
    rootfs="$(mktemp -d /var/tmp/envfoundry-rootfs.XXXXXX)"
    trap 'rm -rf "$rootfs"' EXIT
    echo "provision-docker: debootstrap $SUITE from $mirror into $rootfs"
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$mirror" \
        >"$rootfs.log" 2>&1 || { tail -n 5 "$rootfs.log" >&2; skip "debootstrap failed"; }
    rm -f "$rootfs.log"
    # apt's package cache is of no use in an image that never runs apt.
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" -c . |
        docker import --change "LABEL $PACKAGES_LABEL=$PACKAGES" - "$BASE_IMAGE" >/dev/null ||
        skip "docker import of $BASE_IMAGE failed"
    rm -rf "$rootfs"
    trap - EXIT
fi
echo "provision-docker: base image $BASE_IMAGE present"

# 3. The sandbox image. Its tag hashes the base image's id, the worker and the orjson of the Python
# that runs the sandboxes, so the project's venv builds it; without one, the backend builds it on
# first use.
python="${PYTHON:-.venv/bin/python}"
if [ -x "$python" ]; then
    tag="$(ENVFOUNDRY_SANDBOX_BASE_IMAGE="$BASE_IMAGE" PYTHONPATH="$PWD" "$python" -c \
        'from sandboxes.backends.docker import build_sandbox_image; print(build_sandbox_image())')" ||
        skip "building the sandbox image failed"
    echo "provision-docker: sandbox image $tag present"
else
    echo "provision-docker: no $python yet; the docker backend builds its image on first use"
fi
echo "provision-docker: done in $((SECONDS - started)) s"
