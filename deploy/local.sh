#!/usr/bin/env bash
# A deployment on this machine, as it would be across several: `make deploy-local` (up) and
# `make deploy-down` (down).
#
# up:   a Docker engine, the base and sandbox images (deploy/provision-docker.sh), a
#       private Postgres cluster, the code-location image (deploy/image.py: built only when
#       what goes into it changed), the instance config (deploy/dagster.yaml), the Dagster
#       webserver and daemon on that instance, then `envfoundry build` through it: every run
#       in a container started by DockerRunLauncher, its sandboxes sibling containers.
# down: stops the webserver, the daemon and Postgres, and removes the deployment's containers.
#
# Settings (environment; the Makefile passes its variables of the same names):
#   DEPLOY_HOME      the deployment's home: instance, Postgres, artifacts, datasets, logs
#                    (default var/deploy)
#   DEPLOY_PROFILE   the build's profile (tiny), DEPLOY_SEED its seed (0)
#   DEPLOY_EXECUTOR  in_process (each run's steps in its container) or docker (each step in
#                    a container of its own)
#   DEPLOY_PORT      the webserver's port on 127.0.0.1 (3070)
#   WHEELS_DIR       the host's wheel cache (~/.cache/envfoundry/wheels)
#   BASE_IMAGE       the image the code-location image is built FROM (local/python:3.11)
#   BFCL             the foreign-environment package the Makefile installs --no-deps
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BIN=${BIN:-$REPO/.venv/bin}
DEPLOY_HOME=$(realpath -m "${DEPLOY_HOME:-$REPO/var/deploy}")
PROFILE=${DEPLOY_PROFILE:-tiny}
SEED=${DEPLOY_SEED:-0}
EXECUTOR=${DEPLOY_EXECUTOR:-in_process}
WEB_PORT=${DEPLOY_PORT:-3070}
WHEELS_DIR=${WHEELS_DIR:-$HOME/.cache/envfoundry/wheels}
BASE_IMAGE=${BASE_IMAGE:-local/python:3.11}
BFCL=${BFCL:-bfcl-eval==2026.3.23}
DOCKER_SOCKET=${DOCKER_SOCKET:-/var/run/docker.sock}
STATE=$DEPLOY_HOME/deploy
PG_USER=envfoundry
PG_DB=envfoundry

say() { printf 'deploy: %s\n' "$*"; }
die() { printf 'deploy: %s\n' "$*" >&2; exit 1; }

# Postgres refuses to run as root: as root the cluster belongs to the `postgres` user the
# Debian package creates.
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_bin() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$dir" ] && [ -x "$dir/initdb" ] \
        || die "PostgreSQL is not installed (Debian: apt-get install postgresql)"
    echo "$dir"
}

free_port() {
    "$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_data() {
    # Under the home when the cluster's owner can reach it; a home under a private folder
    # (root's 0700 home, pytest's temporary folders) keeps it in the postgres user's home
    # instead, linked from the deployment's home.
    local data=$DEPLOY_HOME/postgres
    if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$DEPLOY_HOME"; then
        local key
        key=$(printf '%s' "$DEPLOY_HOME" | sha256sum | cut -c1-16)
        local elsewhere=/var/lib/postgresql/envfoundry-$key
        mkdir -p "$elsewhere" && chown postgres: "$elsewhere"
        [ -L "$data" ] || ln -sfn "$elsewhere" "$data"
        data=$elsewhere
    fi
    echo "$data"
}

postgres_up() {
    local bin data port
    bin=$(pg_bin)
    data=$(pg_data)
    if [ -f "$STATE/pg_port" ]; then port=$(cat "$STATE/pg_port"); else
        port=$(free_port); echo "$port" > "$STATE/pg_port"; fi
    if [ ! -f "$data/PG_VERSION" ]; then
        mkdir -p "$data"
        [ "$(id -u)" = 0 ] && chown postgres: "$data"
        chmod 0700 "$data"
        as_pg "$bin/initdb" --pgdata "$data" --username "$PG_USER" --auth trust \
            --encoding UTF8 --no-instructions >"$STATE/initdb.log" 2>&1 \
            || die "initdb failed: $(tail -n 5 "$STATE/initdb.log")"
    fi
    if ! as_pg "$bin/pg_ctl" --pgdata "$data" status >/dev/null 2>&1; then
        as_pg "$bin/pg_ctl" --pgdata "$data" --log "$data/server.log" --wait --silent \
            -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$data" start \
            || die "Postgres did not start: $(tail -n 5 "$data/server.log" 2>/dev/null)"
    fi
    if ! "$bin/psql" -h 127.0.0.1 -p "$port" -U "$PG_USER" -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'" | grep -q 1; then
        "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$PG_USER" "$PG_DB"
    fi
    PG_PORT=$port
    say "Postgres on 127.0.0.1:$port (data $data)"
}

postgres_down() {
    local bin data
    bin=$(pg_bin) || return 0
    data=$DEPLOY_HOME/postgres
    [ -f "$data/PG_VERSION" ] || return 0
    as_pg "$bin/pg_ctl" --pgdata "$(realpath "$data")" status >/dev/null 2>&1 || return 0
    as_pg "$bin/pg_ctl" --pgdata "$(realpath "$data")" --wait --silent --mode fast stop
    say "Postgres stopped"
}

# Provisioning says why it could not (not root, no apt) and goes on; what is still missing
# then stops the deployment here, in one line.
docker_up() {
    PYTHON="$BIN/python" BASE_IMAGE="$BASE_IMAGE" deploy/provision-docker.sh
    command -v docker >/dev/null 2>&1 \
        || die "no docker CLI (deploy/provision-docker.sh installs docker.io, as root)"
    docker version --format '{{.Server.Version}}' >/dev/null 2>&1 \
        || die "no Docker engine answers (deploy/provision-docker.sh starts dockerd, as root)"
    docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 \
        || die "the base image $BASE_IMAGE is missing (deploy/provision-docker.sh builds it)"
}

# The instance config, from deploy/dagster.yaml; true when it changed (the webserver and the
# daemon read it once, so they start again).
render_instance() {
    mkdir -p "$DEPLOY_HOME/dagster"
    local config=$DEPLOY_HOME/dagster/dagster.yaml
    PG_USER=$PG_USER PG_DB=$PG_DB PG_PORT=$PG_PORT IMAGE=$IMAGE DEPLOY_HOME=$DEPLOY_HOME \
        EXECUTOR=$EXECUTOR DOCKER_SOCKET=$DOCKER_SOCKET MAX_RUNS=2 UID_LEASES=$UID_LEASES \
        "$BIN/python" -c '
import os, string, sys
text = string.Template(open(sys.argv[1]).read()).substitute(os.environ)
open(sys.argv[2], "w").write(text)' deploy/dagster.yaml "$config.new"
    if cmp -s "$config.new" "$config"; then rm "$config.new"; return 1; fi
    mv "$config.new" "$config"
}

alive() { [ -f "$STATE/$1.pid" ] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

# A service in a session of its own (stopped with everything it started), logging into the
# home, with the deployment's instance and settings.
service_up() {
    local name=$1; shift
    if alive "$name"; then say "$name already running (pid $(cat "$STATE/$name.pid"))"; return; fi
    setsid "$@" >"$DEPLOY_HOME/logs/$name.log" 2>&1 < /dev/null &
    echo $! > "$STATE/$name.pid"
    say "$name started (pid $!, log $DEPLOY_HOME/logs/$name.log)"
}

service_down() {
    local name=$1
    if alive "$name"; then
        local pid
        pid=$(cat "$STATE/$name.pid")
        kill -TERM -- "-$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL -- "-$pid" 2>/dev/null || true
        say "$name stopped"
    fi
    rm -f "$STATE/$name.pid"
}

wait_for_webserver() {
    "$BIN/python" - "$WEB_PORT" "$STATE/webserver.pid" <<'EOF'
import os, sys, time, urllib.request
port, pidfile = sys.argv[1], sys.argv[2]
pid = int(open(pidfile).read())
for _ in range(600):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2).read()
        raise SystemExit(0)
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            raise SystemExit("the webserver ended before it answered")
        time.sleep(0.5)
raise SystemExit("the webserver did not answer in 5 minutes")
EOF
}

up() {
    case "$EXECUTOR" in in_process|docker) ;; *) die "DEPLOY_EXECUTOR=$EXECUTOR: in_process or docker";; esac
    [ -x "$BIN/dagster-webserver" ] || die "no $BIN/dagster-webserver: run make install first"
    mkdir -p "$STATE" "$DEPLOY_HOME/logs"
    docker_up
    postgres_up
    # The host's sandbox uid leases, seen by run containers (as root in them) where their
    # own sandboxes look for them.
    UID_LEASES=$("$BIN/python" -c 'from sandboxes.uids import lease_dir; print(lease_dir())')
    IMAGE=$("$BIN/python" deploy/image.py --wheels "$WHEELS_DIR" --base "$BASE_IMAGE" --extra "$BFCL")
    say "code-location image $IMAGE"
    if render_instance; then
        service_down daemon
        service_down webserver
    fi
    export DAGSTER_HOME=$DEPLOY_HOME/dagster ENVFOUNDRY_HOME=$DEPLOY_HOME \
        ENVFOUNDRY_EXECUTOR=$EXECUTOR DO_NOT_TRACK=1
    service_up webserver "$BIN/dagster-webserver" -h 127.0.0.1 -p "$WEB_PORT" -w workspace.yaml
    service_up daemon "$BIN/dagster-daemon" run -w workspace.yaml
    wait_for_webserver || die "see $DEPLOY_HOME/logs/webserver.log"
    say "Dagster UI on http://127.0.0.1:$WEB_PORT (instance $DAGSTER_HOME)"
    "$BIN/python" -m orchestration.cli build --home "$DEPLOY_HOME" --profile "$PROFILE" --seed "$SEED" \
        --sandbox docker
}

down() {
    mkdir -p "$STATE"
    service_down daemon
    service_down webserver
    if command -v docker >/dev/null 2>&1; then
        local containers
        containers=$(docker ps -aq --filter "label=envfoundry.deployment=$DEPLOY_HOME" 2>/dev/null || true)
        if [ -n "$containers" ]; then
            # shellcheck disable=SC2086
            docker rm -f $containers >/dev/null
            say "removed $(echo "$containers" | wc -w) run container(s)"
        fi
    fi
    postgres_down
}

# One compound command, read whole before it runs, and `exit` inside it: bash reads a script
# as it goes, so an edit to this file during a build (a pull, a checkout) cannot change what
# the running deployment does next.
{
    case "${1:-up}" in
        up) up ;;
        down) down ;;
        *) die "usage: deploy/local.sh [up|down]" ;;
    esac
    exit
}
