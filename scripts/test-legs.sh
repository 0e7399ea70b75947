#!/bin/sh
# test-legs.sh: runs make test's legs one at a time on an otherwise idle
# machine and prints, for each, its wall time and the CPU time the whole
# machine spent meanwhile (every process: go test, the compiler, dockerd,
# containerd, the sandboxes), from /proc/stat. make test runs the first
# six legs at once on two cores: their CPU seconds, summed and halved,
# bound its first phase's wall time from below.
#
#   scripts/test-legs.sh [leg...]    (default: every leg; logs in var/legs/)
set -eu
cd "$(dirname "$0")/.."
legs=${*:-suite-pkgs suite-rest suite-services suite-faults suite-split suite-runsc-leg suite-disruptive fuzz}
mkdir -p var/legs
make --no-print-directory image >/dev/null
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
hz=$(getconf CLK_TCK)
printf '%-18s %8s %10s %s\n' leg wall_s cpu_s result
for leg in $legs; do
	b0=$(busy); t0=$(date +%s)
	if make --no-print-directory "$leg" >"var/legs/$leg.log" 2>&1; then r=ok; else r=FAIL; fi
	t1=$(date +%s); b1=$(busy)
	printf '%-18s %8d %10d %s\n' "$leg" $((t1 - t0)) $(((b1 - b0) / hz)) "$r"
done
