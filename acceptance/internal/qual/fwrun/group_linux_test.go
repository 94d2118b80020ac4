//go:build linux

package fwrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// groupNVMe answers id-ctrl and fw-log from the revision in $0.fr, counts
// the commands sent in $0.sent, and makes fw-commit switch the revision
// to the image's first 8 bytes. It stands in for a controller; the loop
// devices, fio, its load and the known region's read-back are real.
const groupNVMe = `#!/bin/sh
st="$0"
echo "$1" >> "$st.sent"
case "$1" in
id-ctrl) printf '{"mn":"M","sn":"S","fr":"%s"}\n' "$(cat "$st.fr")" ;;
fw-log) printf '{"x":{"Active Firmware Slot (afi)":%s,"Firmware Rev Slot 1":"1 (OLD00001)","Firmware Rev Slot 2":"1 (%s)"}}\n' "$(cat "$st.afi")" "$(cat "$st.fr")" ;;
fw-download) for a in "$@"; do case "$a" in --fw=*) cp "${a#--fw=}" "$st.img";; esac; done ;;
fw-commit) head -c 8 "$st.img" > "$st.fr"; echo 2 > "$st.afi" ;;
esac
`

// Two given namespaces of one controller are one step: the commands are
// sent once, the load and the known region cover both drives, and each
// drive has its result, the step's.
func TestGroupIsOneStepOnAllItsDrives(t *testing.T) {
	testenv.MustHaveRoot(t)
	testenv.MustHaveLoop(t)
	testenv.MustHave(t, "fio", "apt-get install fio")
	a, b := testenv.Loop(t, 32<<20), testenv.Loop(t, 32<<20)
	bin := filepath.Join(t.TempDir(), "nvme")
	require.NoError(t, os.WriteFile(bin, []byte(groupNVMe), 0o755))
	require.NoError(t, os.WriteFile(bin+".fr", []byte("OLD00001"), 0o644))
	require.NoError(t, os.WriteFile(bin+".afi", []byte("1"), 0o644))
	img := filepath.Join(t.TempDir(), "fw (v2).bin")
	require.NoError(t, os.WriteFile(img, []byte("NEW00002rest"), 0o644))

	// One controller: the same subsystem (a loop device has none).
	info := func(p string) device.Info {
		return device.Info{Path: p, Resolved: p, Name: filepath.Base(p), Block: true, Size: 32 << 20, Subsystem: "nqn.test"}
	}
	ds := infoDrives(info(a), info(b))
	cfg := &cmdline.Config{Firmware: img}
	var pl plan.Plan
	Add(&pl, cfg, fwSpec, ds)
	require.Len(t, pl.Steps, 1)
	rec := t.TempDir()
	in := In{Drives: ds, Plan: pl, Spec: fwSpec, Record: rec, NVMe: nvme.CLI{Binary: bin}}
	rs := runGroup(t.Context(), in, pl.Steps[0], []int{0, 1}, nil, t.Logf)
	require.Len(t, rs, 2)
	for i, r := range rs {
		assert.Equal(t, ds[i].Path, r.Drive)
		assert.Equal(t, img, r.Image)
		assert.Equal(t, firmware.Pass, r.Verdict, r.Message)
		assert.True(t, strings.HasPrefix(r.Message, ds[i].Path+": OLD00001 to NEW00002"), r.Message)
		assert.Contains(t, r.Message, "the 16 MiB written before the download included")
	}
	sent, err := os.ReadFile(bin + ".sent")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(sent), "fw-download\n"))
	assert.Equal(t, 1, strings.Count(string(sent), "fw-commit\n"))
	dir := filepath.Join(rec, "firmware", filepath.Base(a))
	job, err := os.ReadFile(filepath.Join(dir, "firmware-activate.fio"))
	require.NoError(t, err)
	assert.Contains(t, string(job), "filename="+a+"\noffset=8388608\n")
	assert.Contains(t, string(job), "filename="+b+"\noffset=8388608\n")
	known, err := os.ReadFile(filepath.Join(dir, "firmware-activate-known-read.fio"))
	require.NoError(t, err)
	assert.Contains(t, string(known), "filename="+b+"\n")
}
