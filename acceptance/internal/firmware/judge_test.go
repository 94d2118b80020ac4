package firmware

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The stall is the longer of the longest window without a completion
// (the logs merged) and the longest completion latency.
func TestReadLogs(t *testing.T) {
	w := "10, 500000, 1, 4096, 0\n20, 600000, 1, 4096, 0\n3100, 3050000000, 1, 4096, 0\n"
	r := "15, 400000, 0, 4096, 0\n1000, 900000, 0, 4096, 0\n3110, 700000, 0, 4096, 0\n"
	st, err := ReadLogs(strings.NewReader(w), strings.NewReader(r))
	require.NoError(t, err)
	assert.Equal(t, 2100*time.Millisecond, st.Gap)
	assert.Equal(t, 3050*time.Millisecond, st.MaxLatency)
	assert.Equal(t, 3050*time.Millisecond, st.Of())
	_, err = ReadLogs(strings.NewReader(""))
	assert.ErrorContains(t, err, "no completion")
	_, err = ReadLogs(strings.NewReader("x, y\n"))
	assert.ErrorContains(t, err, "line 1")
}

// nvme-cli's fw-log JSON, as 2.x prints it.
func TestParseSlotLog(t *testing.T) {
	l, err := ParseSlotLog([]byte(`{"nvme0":{"Active Firmware Slot (afi)":18,"Firmware Rev Slot 1":"3617294412169834033 (1.0)","Firmware Rev Slot 2":"12345 (GDC7201Q)"}}`))
	require.NoError(t, err)
	assert.Equal(t, 2, l.Active)
	assert.Equal(t, map[int]string{1: "1.0", 2: "GDC7201Q"}, l.Slots)
	// QEMU 7.2's controller runs "1.0", padded with spaces, which
	// nvme-cli 2.3 prints as dots in the slot log.
	l, err = ParseSlotLog([]byte(`{"nvme2":{"Active Firmware Slot (afi)":1,"Firmware Rev Slot 1":"2314885530819505713 (1.0.....)"}}`))
	require.NoError(t, err)
	assert.Equal(t, map[int]string{1: "1.0"}, l.Slots)
	_, err = ParseSlotLog([]byte(`{"nvme0":{}}`))
	assert.ErrorContains(t, err, "no active slot")
}

func TestJudge(t *testing.T) {
	before := SlotLog{Active: 1, Slots: map[int]string{1: "OLD1"}}
	good := SlotLog{Active: 2, Slots: map[int]string{1: "OLD1", 2: "NEW2"}}
	base := Observed{Before: "OLD1", After: "NEW2", LogBefore: before, LogAfter: good, IdentityBefore: "m s", IdentityAfter: "m s",
		Stall: Stall{Gap: 150 * time.Millisecond, MaxLatency: 200 * time.Millisecond}, MaxStall: time.Second, Slot: 2}
	tests := []struct {
		name string
		edit func(o *Observed)
		want string // "" passes
	}{
		{"pass", func(o *Observed) {}, ""},
		{"stall", func(o *Observed) { o.Stall.MaxLatency = 3020 * time.Millisecond }, "I/O stalled 3020 ms (fio: longest completion latency 3020 ms, longest window without a completion 150 ms), over max_stall 1s"},
		{"old revision", func(o *Observed) {
			o.After = "OLD1"
			o.LogAfter = SlotLog{Active: 1, Slots: map[int]string{1: "OLD1", 2: "NEW2"}}
		}, "still running OLD1 (id-ctrl fr) after the commit; the slot log's slot 2 holds NEW2"},
		{"slot log disagrees", func(o *Observed) { o.LogAfter = SlotLog{Active: 1, Slots: map[int]string{1: "OLD1", 2: "NEW2"}} }, "id-ctrl reports NEW2 running, but the slot log's active slot 1 holds OLD1"},
		{"back", func(o *Observed) { o.Want = "OLD0" }, "running NEW2 after the step, not OLD0"},
		// A revision of fewer than 8 characters: id-ctrl's fr trimmed, the
		// slot log's padding printed as dots by nvme-cli.
		{"short revision", func(o *Observed) {
			o.After, o.Want = "1.0", "1.0"
			var err error
			o.LogAfter, err = ParseSlotLog([]byte(`{"nvme2":{"Active Firmware Slot (afi)":2,"Firmware Rev Slot 1":"2314885530819505713 (1.0.....)","Firmware Rev Slot 2":"2314885530819505713 (1.0.....)"}}`))
			require.NoError(t, err)
		}, ""},
		{"short revision, other slot active", func(o *Observed) {
			o.After = "E2MU200"
			var err error
			o.LogAfter, err = ParseSlotLog([]byte(`{"nvme2":{"Active Firmware Slot (afi)":1,"Firmware Rev Slot 1":"2314885530819505713 (1.0.....)","Firmware Rev Slot 2":"2319406800833425989 (E2MU200.)"}}`))
			require.NoError(t, err)
		}, "id-ctrl reports E2MU200 running, but the slot log's active slot 1 holds 1.0 (before: OLD1)"},
		{"identity", func(o *Observed) { o.IdentityAfter = "m t" }, "identity changed: m s before, m t after"},
		{"allow-list", func(o *Observed) { o.Allowed = []string{"OLD1"} }, "firmware NEW2 is not in the spec's [health] firmware [OLD1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.edit(&o)
			r := Result{Drive: "/dev/x", Action: "activate-now"}
			Judge(&r, o)
			if tt.want == "" {
				assert.Equal(t, Pass, r.Verdict, r.Message)
				assert.Contains(t, r.Message, "OLD1 to "+o.After)
				return
			}
			assert.Equal(t, Fail, r.Verdict)
			assert.Contains(t, r.Message, tt.want)
		})
	}
}

// With slot 0 (the controller chose) and several slots changed, the slot
// named is the active one among them, else the lowest, every time.
func TestJudgeSlotPickIsDeterministic(t *testing.T) {
	before := SlotLog{Active: 1, Slots: map[int]string{1: "OLD1"}}
	after := SlotLog{Active: 1, Slots: map[int]string{1: "OLD1", 2: "NEW2", 3: "NEW3", 4: "NEW4", 5: "NEW5", 6: "NEW6", 7: "NEW7"}}
	for range 50 {
		var r Result
		Judge(&r, Observed{Before: "OLD1", After: "OLD1", LogBefore: before, LogAfter: after, MaxStall: time.Second})
		require.Equal(t, "NEW2", r.SlotRevision)
	}
	after.Active = 4
	var r Result
	Judge(&r, Observed{Before: "OLD1", After: "NEW4", LogBefore: before, LogAfter: after, MaxStall: time.Second})
	assert.Equal(t, "NEW4", r.SlotRevision)
}

// The known region is a quarter of the drive, at most 1 GiB, in whole
// MiB, and none on a drive under 4 MiB; its jobs write and check a
// pattern that carries each block's offset.
func TestKnown(t *testing.T) {
	assert.Equal(t, int64(16<<20), KnownBytes(64<<20))
	assert.Equal(t, int64(KnownMax), KnownBytes(1920e9))
	assert.Equal(t, int64(0), KnownBytes(3<<20))
	assert.Equal(t, int64(0), KnownBytes(0))
	w, r := Known([]string{"/dev/a", "/dev/b"}, 16<<20, 0xabc, false), Known([]string{"/dev/a"}, 16<<20, 0xabc, true)
	assert.Contains(t, w, "rw=write\nverify=pattern\nverify_pattern=0x0000000000000abc%o\nverify_state_save=0\ndo_verify=0\n[known-0]\nfilename=/dev/a\n[known-1]\nfilename=/dev/b\n")
	assert.Contains(t, r, "size=16777216\nrw=read\nverify=pattern\nverify_pattern=0x0000000000000abc%o\nverify_state_save=0\nverify_fatal=1\n")
	j := Job([]string{"/dev/a", "/dev/b"}, 16<<20, "/p")
	assert.Contains(t, j, "[write-1]\nfilename=/dev/b\noffset=16777216\n")
	assert.Contains(t, j, "[read]\nfilename=/dev/a\noffset=16777216\nrw=randread\nwrite_lat_log=/p-read\n")
}

// TestJobFilesEscapeAndLeaveNoState: a path with a colon (a by-path link,
// pci-0000:00:1f.2-nvme-1) is one file to fio, not three, in the load's
// and the known region's jobs; neither leaves a verify state file where
// fio runs, and both run their jobs as threads of one process.
func TestJobFilesEscapeAndLeaveNoState(t *testing.T) {
	dev := "/dev/disk/by-path/pci-0000:00:1f.2-nvme-1"
	for name, job := range map[string]string{
		"load":       Job([]string{dev}, 1<<20, "/tmp/x"),
		"known":      Known([]string{dev}, 1<<20, 7, false),
		"known read": Known([]string{dev}, 1<<20, 7, true),
	} {
		if !strings.Contains(job, `filename=/dev/disk/by-path/pci-0000\:00\:1f.2-nvme-1`+"\n") || strings.Contains(job, "filename="+dev+"\n") {
			t.Errorf("%s: the filename is not escaped:\n%s", name, job)
		}
		if !strings.Contains(job, "verify_state_save=0") {
			t.Errorf("%s: no verify_state_save=0:\n%s", name, job)
		}
		// A forked job process outlives its killed fio: a suite killed
		// mid-step would leave it writing the drive.
		if !strings.Contains(job, "\nthread=1\n") {
			t.Errorf("%s: its jobs are not threads (no thread=1):\n%s", name, job)
		}
	}
}
