#!/bin/sh
# Stands in for nvme-cli in health tests: the test installs it as "nvme"
# first in PATH. "nvme smart-log DEV -o json" prints
# $NVME_STANDIN_DIR/smart-log.N.json, N counting that device's reads from 1
# (the last file is repeated once they run out), or $NVME_STANDIN_DIR/DEV/
# smart-log.N.json when that directory exists (DEV: the path with "/" as
# "_", e.g. _dev_loop3); "nvme id-ctrl DEV -o json"
# prints $NVME_STANDIN_DIR/id-ctrl.json; "nvme version" prints a version.
# Anything else fails as nvme-cli does for a device it cannot read.
dir=${NVME_STANDIN_DIR:?}
case "$1" in
version)
	echo "nvme version 2.4 (git 2.4)"
	exit 0
	;;
id-ctrl)
	cat "$dir/id-ctrl.json"
	exit 0
	;;
smart-log)
	dev=$(echo "$2" | tr '/' '_')
	n=$(($(cat "$dir/count.$dev" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$dir/count.$dev"
	logs=$dir
	if [ -d "$dir/$dev" ]; then
		logs=$dir/$dev
	fi
	file=$logs/smart-log.$n.json
	while [ ! -e "$file" ] && [ "$n" -gt 1 ]; do
		n=$((n - 1))
		file=$logs/smart-log.$n.json
	done
	cat "$file"
	exit 0
	;;
esac
echo "$2: Inappropriate ioctl for device" >&2
exit 1
