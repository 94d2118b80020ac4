#!/bin/sh
# Stands in for fio in the integrity tests: the test installs it as "fio"
# first in PATH. Before a read-back (a job file with rw=read and a
# verify_pattern) it changes the image $CORRUPT_IMG, with O_DIRECT past the
# page cache, as a drive that returns other data than it was given would:
# $CORRUPT_BYTES bytes (512 unless set) at byte $CORRUPT_OFFSET become
# 0xa5 (where the tests change them, the fill's pattern holds the low
# byte of a block's offset, 00, so the first byte changed is the one fio
# names); or, with $CORRUPT_RESTORE set, that
# file (an image saved from an earlier run) is written back over the whole
# image, as a drive that dropped this run's writes would. Then, like every
# other run, it hands the job to the real fio at $CORRUPT_REAL.
# With $CORRUPT_TRUNCATE set (bytes), the read-back instead finds
# $CORRUPT_IMG cut to that size: the loop device over it answers every
# read past it with an I/O error (EIO), as a drive whose media went bad
# after the fill would, and the blocks before it read back as written.
# With $CORRUPT_CELL set as well (a cell's test name,
# "TestScaling/2_drives/128KB_Sequential_Read"), the image is cut to
# $CORRUPT_TRUNCATE just before that cell's measurement instead, not before
# the read-back: the cell's reads past it fail with EIO mid-cell; with
# $CORRUPT_SAVE set as well, the whole image is first copied to that file,
# so that a test can give the drive its data back (an intermittent error).
# With $CORRUPT_HOLD set (seconds), a read-back's fio runs to its end with
# its stderr passed on as it writes it, and this script then prints fio's
# stdout and waits that long before it exits (with status 0), as a long
# read-back that has already named a mismatch would still be running.
# With $CORRUPT_DROP_LAST set, a fill of more than one pass runs without
# its last pass, as a drive that kept the earlier passes and dropped the
# last pass's writes: without the last pass's sections ([... .last], which
# wait_for the earlier passes'), or one loop fewer (loops=N, N > 1).
# With $CORRUPT_WAIT_CELL set (a cell's test name), that cell's fio is not
# started until the file $CORRUPT_WAIT_FILE exists: a test that kills the
# suite once the cells before it are recorded does so before that cell is
# measured, however late its kill lands on a loaded host.
if [ -z "${CORRUPT_REAL:-}" ] || [ "$CORRUPT_REAL" -ef "$0" ]; then
	echo "fio-corrupt.sh: CORRUPT_REAL must name the real fio, not this stand-in" >&2
	exit 98
fi
for arg; do job=$arg; done
if [ -n "${CORRUPT_WAIT_CELL:-}" ]; then
	case "$job" in
	*/"$CORRUPT_WAIT_CELL.fio")
		while [ ! -e "${CORRUPT_WAIT_FILE:?}" ]; do sleep 0.1; done
		;;
	esac
fi
if [ -n "${CORRUPT_CELL:-}" ]; then
	case "$job" in
	*/"$CORRUPT_CELL.fio")
		if [ -n "${CORRUPT_SAVE:-}" ]; then cp "$CORRUPT_IMG" "$CORRUPT_SAVE" || exit 99; fi
		truncate -s "$CORRUPT_TRUNCATE" "$CORRUPT_IMG" || exit 99
		;;
	esac
elif [ -n "${CORRUPT_IMG:-}" ] && [ -f "$job" ] && grep -qx 'rw=read' "$job" && grep -q '^verify_pattern=' "$job"; then
	if [ -n "${CORRUPT_TRUNCATE:-}" ]; then
		truncate -s "$CORRUPT_TRUNCATE" "$CORRUPT_IMG" || exit 99
	elif [ -n "${CORRUPT_RESTORE:-}" ]; then
		dd if="$CORRUPT_RESTORE" of="$CORRUPT_IMG" bs=1M conv=notrunc oflag=direct 2>/dev/null || exit 99
	else
		n=${CORRUPT_BYTES:-512}
		head -c "$n" /dev/zero | tr '\000' '\245' |
			dd of="$CORRUPT_IMG" bs="$n" seek="$((CORRUPT_OFFSET / n))" count=1 conv=notrunc oflag=direct 2>/dev/null || exit 99
	fi
fi
if [ -n "${CORRUPT_DROP_LAST:-}" ] && [ -f "$job" ] && grep -qx 'rw=write' "$job" &&
	{ grep -q '^wait_for=' "$job" || grep -Eqx 'loops=([2-9]|[1-9][0-9]+)' "$job"; }; then
	dropped="$job.dropped-last"
	if grep -q '^wait_for=' "$job"; then
		awk '/^\[/ { skip = ($0 ~ /\.last\]$/) } !skip' "$job" >"$dropped" || exit 99
	else
		awk -F= '$1 == "loops" && $2 > 1 { $0 = "loops=" ($2 - 1) } { print }' "$job" >"$dropped" || exit 99
	fi
	n=$#
	for arg; do
		n=$((n - 1))
		if [ "$n" -gt 0 ]; then set -- "$@" "$arg"; else set -- "$@" "$dropped"; fi
	done
	shift $(($# / 2))
fi
if [ -n "${CORRUPT_HOLD:-}" ] && [ -f "$job" ] && grep -qx 'rw=read' "$job" && grep -q '^verify_pattern=' "$job"; then
	# Beside the job file, in the test's own directory: the test kills
	# this script mid-read, before its rm, and go test removes that one.
	out=$(mktemp "$job.out.XXXXXX") || exit 99
	"$CORRUPT_REAL" "$@" >"$out"
	cat "$out"
	rm -f "$out"
	# The same process goes on (and dies with the suite, as fio would).
	exec sleep "$CORRUPT_HOLD"
fi
exec "$CORRUPT_REAL" "$@"
