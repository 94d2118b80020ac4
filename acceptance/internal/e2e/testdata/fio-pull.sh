#!/bin/sh
# Stands in for fio in the neighbour-pulled tests: the test installs it as
# "fio" first in PATH. Every run goes to the real fio at $PULL_REAL, and
# fio's exit status is passed on. The device node $PULL_NODE (a loop
# device) is removed, as a pulled drive loses its node and sysfs entry:
# with $PULL_DURING=fill, once a fill's fio (rw=write and do_verify=0) has
# ended, as a drive pulled right after its last write of the fill was
# acknowledged; with $PULL_DURING=readback, during a read-back's fio
# (rw=read and a verify_pattern): once fio has the device open, the loop
# device's image $PULL_IMG is cut to 0 bytes and the device told its new
# size (losetup -c), as the kernel sets a removed NVMe namespace's
# capacity to 0, so that each read fio sends from then on completes with
# no bytes and no error; the node goes once fio has ended.
if [ -z "${PULL_REAL:-}" ] || [ "$PULL_REAL" -ef "$0" ]; then
	echo "fio-pull.sh: PULL_REAL must name the real fio, not this stand-in" >&2
	exit 98
fi
for arg; do job=$arg; done
pull=
case "${PULL_DURING:-fill}" in
fill)
	[ -f "$job" ] && grep -qx 'rw=write' "$job" && grep -qx 'do_verify=0' "$job" && pull=1
	;;
readback)
	if [ -f "$job" ] && grep -qx 'rw=read' "$job" && grep -q '^verify_pattern=' "$job"; then
		"$PULL_REAL" "$@" &
		pid=$!
		# Once fio has the device open (it reads at once), for at most 30 s.
		i=0
		until ls -l "/proc/$pid/fd" 2>/dev/null | grep -q -- "-> $PULL_NODE\$" || [ "$i" -ge 3000 ]; do
			i=$((i + 1))
			sleep 0.01
		done
		truncate -s 0 "$PULL_IMG" && losetup -c "$PULL_NODE" || exit 99
		wait "$pid"
		status=$?
		rm -f "$PULL_NODE" || exit 99
		exit $status
	fi
	;;
esac
"$PULL_REAL" "$@"
status=$?
if [ -n "$pull" ] && [ -n "${PULL_NODE:-}" ]; then
	rm -f "$PULL_NODE" || exit 99
fi
exit $status
