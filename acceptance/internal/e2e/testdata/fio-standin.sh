#!/bin/sh
# Stands in for fio in fault tests: the test installs it as "fio" first in
# PATH. It answers --version with $STANDIN_VERSION (default fio-3.33); a
# run whose job file is named $STANDIN_GARBAGE prints text that is not JSON,
# one named $STANDIN_EMPTY prints nothing, one named $STANDIN_HANG hangs
# ignoring SIGINT and SIGTERM (as a fio stuck in the kernel would); every
# other run is handed to the real fio at $STANDIN_REAL. Each hanging
# process appends its pid to $STANDIN_PIDS.
if [ "$1" = "--version" ]; then
	echo "${STANDIN_VERSION:-fio-3.33}"
	exit 0
fi
for arg; do job=$arg; done
case "${job##*/}" in
"$STANDIN_GARBAGE")
	echo "fio: this is not JSON"
	echo "<html>garbage</html>"
	exit 0
	;;
"$STANDIN_EMPTY")
	exit 0
	;;
"$STANDIN_HANG")
	trap '' INT TERM
	echo $$ >>"$STANDIN_PIDS"
	sleep 3600 &
	echo $! >>"$STANDIN_PIDS"
	wait
	exit 1
	;;
esac
exec "$STANDIN_REAL" "$@"
