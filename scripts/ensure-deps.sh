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
