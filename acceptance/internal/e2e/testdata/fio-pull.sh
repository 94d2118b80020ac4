#!/bin/sh
# Stands in for fio in the neighbour-pulled tests: the test installs it as
# "fio" first in PATH. Every run goes to the real fio at $PULL_REAL, and
# fio's exit status is passed on. The device node $PULL_NODE (a loop
# device) is removed, as a pulled drive loses its node and sysfs entry.
# With $PULL_DURING=after-fill, once a fill's fio (rw=write and
# do_verify=0) has ended, as a drive pulled right after its last write of
# the fill was acknowledged. With $PULL_DURING=readback, during a
# read-back's fio (rw=read and a verify_pattern): once fio has the
# device open, the loop device's image $PULL_IMG is cut to 0 bytes
# and the device told its new size (losetup -c), as the kernel sets a
# removed NVMe namespace's capacity to 0, so that fio's I/Os from then on
# fail or complete with no bytes; the node goes once fio has ended.
# With $PULL_DURING=dying, a drive whose media fails and whose controller
# dies after: before a read-back's fio starts, the first MiB of $PULL_IMG
# is zeroed behind the device's back (fio reads zeros there at once);
# 10 s after fio has ended, the device goes as a pulled one does.
if [ -z "${PULL_REAL:-}" ] || [ "$PULL_REAL" -ef "$0" ]; then
	echo "fio-pull.sh: PULL_REAL must name the real fio, not this stand-in" >&2
	exit 98
fi
for arg; do job=$arg; done
pull=
fill=
[ -f "$job" ] && grep -qx 'rw=write' "$job" && grep -qx 'do_verify=0' "$job" && fill=1
readback=
[ -f "$job" ] && grep -qx 'rw=read' "$job" && grep -q '^verify_pattern=' "$job" && readback=1
case "${PULL_DURING:-after-fill}" in
after-fill)
	pull=$fill
	;;
readback)
	if [ -n "$readback" ]; then
		"$PULL_REAL" "$@" &
		pid=$!
		# Once fio has the device open (it reads at once), for at most 30 s.
		i=0
		until ls -l "/proc/$pid/fd" 2>/dev/null | grep -q -- "-> $PULL_NODE\$" || [ "$i" -ge 3000 ] || ! kill -0 "$pid" 2>/dev/null; do
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
dying)
	if [ -n "$readback" ]; then
		dd if=/dev/zero of="$PULL_IMG" bs=1M count=1 conv=notrunc,fsync status=none || exit 99
		"$PULL_REAL" "$@"
		status=$?
		sleep 10
		truncate -s 0 "$PULL_IMG" && losetup -c "$PULL_NODE" || exit 99
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
