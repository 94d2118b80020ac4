#!/bin/sh
# Stands in for nvme-cli with the OCP logs, in the OCP tests: the test
# installs it as "nvme" first in PATH. Its SMART and C0 logs follow what
# was really written to the device: the kernel's count of sectors written
# (/sys/block/<dev>/stat, field 7) gives SMART data_units_written (units
# of 1,000 sectors, rounded up, as NVMe counts them), and the C0 log's
# physical media units written moves by twice that many bytes from the
# autoval file's 39,074,645,999,616 (the drive's life before the test): a
# write amplification of 2.00 over any interval, while the counters'
# totals are in no such ratio, so that a WAF taken of totals, not of
# deltas, shows. From the second C0 read on, "Bad user nand
# blocks - Raw" is 5 (0 on receipt). The logs are the fixtures
# smart-log-v2.4-above-2-64.json and ocp-smart-add-log-autoval-ssd.json
# ($NVME_STANDIN_FIXTURES) with those fields replaced; the latency
# monitor is the inactive C3 fixture; id-ctrl prints
# $NVME_STANDIN_DIR/id-ctrl.json. "error-log DEV -o json" prints one
# error entry; "telemetry-log" fails as nvme-cli 2.3 does on QEMU 7.2's
# controller, which has no telemetry log (its stderr line, as printed
# there). Where $NVME_STANDIN_DIR/powercuts exists (a test's cut command
# appends a line to it a cut), each line is one power loss the drive saw
# and its protection took: SMART unsafe_shutdowns (7) and the C0 log's PLP
# start count (287) rise by one a line; the C0 log's incomplete shutdowns
# stay 0, as a drive that completed every power-loss flush keeps them.
dir=${NVME_STANDIN_DIR:?}
fx=${NVME_STANDIN_FIXTURES:?}
cuts() {
	if [ -f "$dir/powercuts" ]; then
		wc -l <"$dir/powercuts"
	else
		echo 0
	fi
}
units() {
	name=$(basename "$(readlink -f "$1")")
	sectors=$(awk '{print $7}' "/sys/block/$name/stat")
	echo $(((sectors + 999) / 1000))
}
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
	u=$(units "$2")
	sed -E -e "s/\"data_units_written\":[0-9]+/\"data_units_written\":$u/" \
		-e "s/\"data_units_read\":[0-9]+/\"data_units_read\":1/" \
		-e "s/\"unsafe_shutdowns\":[0-9]+/\"unsafe_shutdowns\":$((7 + $(cuts)))/" "$fx/smart-log-v2.4-above-2-64.json"
	exit 0
	;;
error-log)
	echo '{"errors":[{"error_count":1,"sqid":1,"cmdid":12,"status_field":32770,"parm_error_location":65535,"lba":4096,"nsid":1,"vs":0,"trtype":0,"cs":0,"trtype_spec_info":0}]}'
	exit 0
	;;
telemetry-log)
	echo "NVMe status: Invalid Field in Command: A reserved coded value or an unsupported value in a defined field(0x4002)" >&2
	exit 2
	;;
ocp)
	case "$2" in
	smart-add-log)
		u=$(units "$3")
		dev=$(echo "$3" | tr '/' '_')
		n=$(($(cat "$dir/c0count.$dev" 2>/dev/null || echo 0) + 1))
		echo "$n" >"$dir/c0count.$dev"
		bad=0
		if [ "$n" -gt 1 ]; then
			bad=5
		fi
		awk -v media=$((39074645999616 + u * 1024000)) -v bad=$bad -v plp=$((287 + $(cuts))) '
			/"PLP start count"/ { sub(/[0-9]+/, plp) }
			/"Physical media units written"/ { inw = 1 }
			inw && /"lo"/ { sub(/[0-9]+/, media); inw = 0 }
			/"Bad user nand blocks - Raw"/ { sub(/[0-9]+/, bad) }
			{ print }' "$fx/ocp-smart-add-log-autoval-ssd.json"
		exit 0
		;;
	latency-monitor-log)
		cat "$fx/ocp-latency-monitor-log-v2.3-inactive.json"
		exit 0
		;;
	esac
	;;
esac
echo "$2: Inappropriate ioctl for device" >&2
exit 1
