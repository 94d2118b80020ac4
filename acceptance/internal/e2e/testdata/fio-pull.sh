#!/bin/sh
# Stands in for fio in the neighbour-pulled tests: the test installs it as
# "fio" first in PATH. Every run goes to the real fio at $PULL_REAL; once
# a fill's fio (a job file with rw=write and do_verify=0) has ended, the
# device node $PULL_NODE is removed, as a drive pulled right after its
# last write of the fill was acknowledged loses its node (and its sysfs
# entry) before the read-back. fio's exit status is passed on.
if [ -z "${PULL_REAL:-}" ] || [ "$PULL_REAL" -ef "$0" ]; then
	echo "fio-pull.sh: PULL_REAL must name the real fio, not this stand-in" >&2
	exit 98
fi
for arg; do job=$arg; done
"$PULL_REAL" "$@"
status=$?
if [ -n "${PULL_NODE:-}" ] && [ -f "$job" ] && grep -qx 'rw=write' "$job" && grep -qx 'do_verify=0' "$job"; then
	rm -f "$PULL_NODE" || exit 99
fi
exit $status
