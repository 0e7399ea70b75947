#!/usr/bin/env bash
# Installs what testfirst needs on a Debian machine and starts the Docker
# engine if it is not answering. Idempotent: a machine that has everything
# only pays for a few checks.
set -euo pipefail

cd "$(dirname "$0")/.."
mkdir -p var

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
command -v patch >/dev/null 2>&1 || need+=(patch)
# The benchmark runs the same pytest bare, from Debian's packages.
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || need+=(python3-pytest)
# The dependency-environment tests build their own wheels with Debian's
# setuptools and wheel (PyPI is never needed).
/usr/bin/python3 -c 'import setuptools, wheel' >/dev/null 2>&1 || need+=(python3-setuptools python3-wheel)
# The approval card's browser test drives Debian's Chromium, headless.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# gVisor's runsc, the OCI runtime the sealed-grade suite and the corpus
# also run under (sandbox.runtime: runsc).
command -v runsc >/dev/null 2>&1 || need+=(runsc)

if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "ensure-deps: missing ${need[*]}: run as root, or install them with apt-get" >&2
		exit 1
	fi
	echo "ensure-deps: installing ${need[*]}" >&2
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a \
		apt-get install -y -qq "${need[@]}"; } >var/apt.log 2>&1; then
		echo "ensure-deps: apt-get failed; last lines of var/apt.log:" >&2
		tail -n 20 var/apt.log >&2
		exit 1
	fi
fi

engine_up() { docker version >/dev/null 2>&1; }

if ! engine_up; then
	if [ -n "${DOCKER_HOST:-}" ]; then
		echo "ensure-deps: the Docker engine at $DOCKER_HOST does not answer" >&2
		exit 1
	fi
	echo "ensure-deps: starting dockerd (log: var/dockerd.log)" >&2
	nohup dockerd >var/dockerd.log 2>&1 &
	for _ in $(seq 1 60); do
		engine_up && break
		sleep 1
	done
	if ! engine_up; then
		echo "ensure-deps: dockerd did not come up within 60s; last lines of var/dockerd.log:" >&2
		tail -n 20 var/dockerd.log >&2
		exit 1
	fi
fi

# runsc registered with the engine as the runtime "runsc": merged into
# /etc/docker/daemon.json (other settings kept), and the engine told to
# reload its configuration (SIGHUP: runtimes are reloaded live, no restart,
# no container stopped) only when the file changed. runsc gets
# --network=none: every sandbox has network mode none, and runsc refuses a
# network it would have to set up from the engine's namespace here. A
# remote engine (DOCKER_HOST) is its operator's to configure.
runsc_listed() { docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; }
if [ -z "${DOCKER_HOST:-}" ] && command -v runsc >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	mkdir -p /etc/docker
	changed=$(/usr/bin/python3 - "$(command -v runsc)" <<'PY'
import json, os, sys
path = "/etc/docker/daemon.json"
try:
    with open(path) as f:
        cfg = json.load(f)
except FileNotFoundError:
    cfg = {}
want = {"path": sys.argv[1], "runtimeArgs": ["--network=none"]}
if cfg.get("runtimes", {}).get("runsc") == want:
    print("no")
    sys.exit(0)
cfg.setdefault("runtimes", {})["runsc"] = want
tmp = path + ".testfirst"
with open(tmp, "w") as f:
    json.dump(cfg, f, indent=2)
    f.write("\n")
os.replace(tmp, path)
print("yes")
PY
)
	if [ "$changed" = yes ] || ! runsc_listed; then
		pid=$(pidof dockerd || true)
		if [ -n "$pid" ]; then
			echo "ensure-deps: registering runsc with dockerd (reloading /etc/docker/daemon.json, no restart)" >&2
			kill -HUP $pid
			for _ in $(seq 1 20); do
				runsc_listed && break
				sleep 0.5
			done
		fi
	fi
fi
if [ -z "${DOCKER_HOST:-}" ] && ! runsc_listed; then
	echo "ensure-deps: dockerd does not list the runtime runsc: run this script as root, or add runsc to /etc/docker/daemon.json's runtimes and restart dockerd" >&2
	exit 1
fi

# PostgreSQL for the tests that run against it (TESTFIRST_TEST_POSTGRES_URL):
# Debian's server, its default cluster started, and a role and database
# `testfirst` (password `testfirst`, allowed to create databases) on
# 127.0.0.1:5432. Skipped when TESTFIRST_TEST_POSTGRES_URL points elsewhere.
pg_url_default="postgres://testfirst:testfirst@127.0.0.1:5432/testfirst?sslmode=disable"
if [ "${TESTFIRST_TEST_POSTGRES_URL:-$pg_url_default}" = "$pg_url_default" ]; then
	if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
		if [ "$(id -u)" != 0 ]; then
			echo "ensure-deps: missing postgresql: run as root, or install it with apt-get" >&2
			exit 1
		fi
		echo "ensure-deps: installing postgresql" >&2
		if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a \
			apt-get install -y -qq postgresql; } >var/apt.log 2>&1; then
			echo "ensure-deps: apt-get failed; last lines of var/apt.log:" >&2
			tail -n 20 var/apt.log >&2
			exit 1
		fi
	fi

	pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 >/dev/null 2>&1; }

	if ! pg_up; then
		if [ "$(id -u)" != 0 ]; then
			echo "ensure-deps: PostgreSQL is not answering on 127.0.0.1:5432: run as root, or start it" >&2
			exit 1
		fi
		# The package creates a cluster; a machine without one gets it here.
		pg_ver=$(ls /usr/lib/postgresql | sort -n | tail -n 1)
		if ! pg_lsclusters -h 2>/dev/null | grep -q .; then
			pg_createcluster "$pg_ver" main >var/postgres.log 2>&1
		fi
		read -r ver name _ < <(pg_lsclusters -h | head -n 1)
		echo "ensure-deps: starting PostgreSQL $ver/$name (log: var/postgres.log)" >&2
		pg_ctlcluster "$ver" "$name" start >>var/postgres.log 2>&1 ||
			service postgresql start >>var/postgres.log 2>&1 || true
		for _ in $(seq 1 30); do
			pg_up && break
			sleep 1
		done
		if ! pg_up; then
			echo "ensure-deps: PostgreSQL did not come up within 30s; last lines of var/postgres.log:" >&2
			tail -n 20 var/postgres.log >&2
			exit 1
		fi
	fi

	pg_admin() { (cd / && su postgres -s /bin/sh -c "psql -v ON_ERROR_STOP=1 -qtA $*"); }
	if [ "$(pg_admin "-c \"SELECT 1 FROM pg_roles WHERE rolname = 'testfirst'\"" 2>/dev/null)" != 1 ]; then
		echo "ensure-deps: creating PostgreSQL role and database testfirst" >&2
		pg_admin "-c \"CREATE ROLE testfirst LOGIN CREATEDB PASSWORD 'testfirst'\"" >/dev/null
	fi
	if [ "$(pg_admin "-c \"SELECT 1 FROM pg_database WHERE datname = 'testfirst'\"" 2>/dev/null)" != 1 ]; then
		pg_admin "-c \"CREATE DATABASE testfirst OWNER testfirst\"" >/dev/null
	fi
fi
