package report

import (
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/report/drivenames"
	"slices"
	"strings"
	"testing"
)

func loops(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("/dev/loop%d", i))
	}
	return out
}

func nvmes(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("/dev/nvme%dn1", i))
	}
	return out
}

func TestCompactDrives(t *testing.T) {
	for _, tt := range []struct {
		paths []string
		max   int
		want  string
	}{
		{loops(16, 39), MaxListed, "loop16–loop39"},
		{nvmes(24), MaxListed, "nvme0n1–nvme23n1"},
		{[]string{"/dev/loop3"}, MaxListed, "loop3"},
		{[]string{"/dev/loop3", "/dev/loop4"}, MaxListed, "loop3, loop4"},
		{append(loops(0, 2), "/dev/loop7", "/dev/loop9", "/dev/loop10", "/dev/loop11"), MaxListed, "loop0–loop2, loop7, loop9–loop11"},
		// Another number changing is not a run.
		{[]string{"/dev/nvme0n1", "/dev/nvme0n2", "/dev/nvme1n2"}, MaxListed, "nvme0n1, nvme0n2, nvme1n2"},
		// Zero-padded names run on with as many digits.
		{[]string{"brief/1.92TB/08", "brief/1.92TB/09", "brief/1.92TB/10"}, MaxListed, "brief/1.92TB/08–brief/1.92TB/10"},
		{[]string{"/dev/loop08", "/dev/loop09", "/dev/loop010"}, MaxListed, "loop08, loop09, loop010"},
		// Fleet names keep their host.
		{[]string{"host-a:/dev/nvme0n1", "host-a:/dev/nvme1n1", "host-a:/dev/nvme2n1"}, MaxListed, "host-a:nvme0n1–host-a:nvme2n1"},
		// Cut after max entries.
		{[]string{"/dev/loop1", "/dev/loop3", "/dev/loop5", "/dev/loop7", "/dev/loop9"}, 3, "loop1, loop3, loop5 … and 2 more"},
		{append([]string{"/dev/sda"}, loops(0, 9)...), 1, "loop0–loop9 … and 1 more"},
	} {
		if got := drivenames.Compact(tt.paths, tt.max); got != tt.want {
			t.Errorf("drivenames.Compact(%q, %d) = %q, want %q", tt.paths, tt.max, got, tt.want)
		}
	}
}

func TestReasons(t *testing.T) {
	var rs []DriveReason
	for _, d := range loops(16, 39) {
		rs = append(rs, DriveReason{Drive: d, Reason: "did not reach steady state in step 20 (4KB Random Write) within 20s: round 6 not measured"})
	}
	rs = append(rs, DriveReason{Drive: "/dev/loop30", Reason: "had a job error: EIO"})
	rs = append(rs, DriveReason{Reason: "the host was busy"})
	got := Reasons(rs, 24)
	want := []string{
		"24 of 24 drives did not reach steady state in step 20 (4KB Random Write) within 20s: round 6 not measured: loop16–loop39",
		"/dev/loop30 had a job error: EIO",
		"the host was busy",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Reasons = %q, want %q", got, want)
	}
	if got := DrivesLine(nvmes(24)); got != "24 drives: nvme0n1–nvme23n1" {
		t.Errorf("DrivesLine(24 nvme) = %q", got)
	}
	if got := DrivesLine([]string{"/dev/nvme0n1"}); got != "/dev/nvme0n1" {
		t.Errorf("DrivesLine(1) = %q", got)
	}
}

// A glob expands in string order (/dev/loop* gives loop0, loop1,
// loop10, …, loop19, loop2, loop20, …): the drives are listed in number
// order, so that 24 consecutive names are one range and none is left to
// "… and N more".
func TestCompactDrivesGlobOrder(t *testing.T) {
	paths := loops(0, 23)
	slices.Sort(paths) // filepath.Glob's order
	if got, want := drivenames.Compact(paths, MaxListed), "loop0–loop23"; got != want {
		t.Errorf("drivenames.Compact(%q) = %q, want %q", paths, got, want)
	}
	if paths[2] != "/dev/loop10" {
		t.Errorf("CompactDrives reordered its argument: %q", paths)
	}
	nv := append(nvmes(24)[:1], nvmes(24)[2:]...) // nvme1n1 missing
	slices.Sort(nv)
	if got, want := drivenames.Compact(nv, MaxListed), "nvme0n1, nvme2n1–nvme23n1"; got != want {
		t.Errorf("drivenames.Compact(%q) = %q, want %q", nv, got, want)
	}
	hosts := []string{"b:/dev/nvme1n1", "a:/dev/nvme10n1", "a:/dev/nvme9n1", "b:/dev/nvme0n1", "a:/dev/nvme8n1", "b:/dev/nvme2n1"}
	if got, want := drivenames.Compact(hosts, MaxListed), "a:nvme8n1–a:nvme10n1, b:nvme0n1–b:nvme2n1"; got != want {
		t.Errorf("drivenames.Compact(%q) = %q, want %q", hosts, got, want)
	}
}
