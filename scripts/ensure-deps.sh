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
