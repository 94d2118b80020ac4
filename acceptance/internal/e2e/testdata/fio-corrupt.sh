#!/bin/sh
# Stands in for fio in the integrity tests: the test installs it as "fio"
# first in PATH. Before a verify pass (a job file with verify_only=1) it
# overwrites 512 bytes of the image $CORRUPT_IMG at byte $CORRUPT_OFFSET
# with random bytes, with O_DIRECT past the page cache, as a drive that
# returns other data than it was given would; then, like every other run,
# it hands the pass to the real fio at $CORRUPT_REAL.
if [ -z "${CORRUPT_REAL:-}" ] || [ "$CORRUPT_REAL" -ef "$0" ]; then
	echo "fio-corrupt.sh: CORRUPT_REAL must name the real fio, not this stand-in" >&2
	exit 98
fi
for arg; do job=$arg; done
if [ -n "${CORRUPT_IMG:-}" ] && [ -f "$job" ] && grep -qx 'verify_only=1' "$job"; then
	dd if=/dev/urandom of="$CORRUPT_IMG" bs=512 seek=$((CORRUPT_OFFSET / 512)) count=1 \
		conv=notrunc oflag=direct 2>/dev/null || exit 99
fi
exec "$CORRUPT_REAL" "$@"
