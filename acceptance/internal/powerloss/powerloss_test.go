package powerloss

import (
	"strings"
	"testing"
)

func TestParseLatLog(t *testing.T) {
	// As fio 3.33 wrote it (write_lat_log, log_avg_msec=0, log_offset=1).
	log := "0, 525558, 1, 4096, 1011712, 0\n1, 704607, 1, 4096, 12419072, 0\n2, 100, 0, 4096, 0, 0\n"
	got, err := ParseLatLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	want := []Write{{1011712, 4096}, {12419072, 4096}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ParseLatLog = %v, want %v (reads left out)", got, want)
	}
	if _, err := ParseLatLog(strings.NewReader("0, 5, 1, 4096\n")); err == nil || !strings.Contains(err.Error(), "log_offset=1") {
		t.Errorf("ParseLatLog(no offset) error = %v, want one naming log_offset=1", err)
	}
}

func writes(n int) []Write {
	var w []Write
	for i := range n {
		w = append(w, Write{int64(i) * 4096, 4096})
	}
	return w
}

var acknowledgedTests = []struct {
	name string
	job  Job
	rule Rule
	want int
}{
	{"completed: every write", Job{Writes: writes(21), FlushEvery: 8}, Completed, 21},
	{"flushed: before the last flush a later write proves", Job{Writes: writes(21), FlushEvery: 8}, Flushed, 16},
	{"flushed: the flush after the 16th unproven", Job{Writes: writes(16), FlushEvery: 8}, Flushed, 8},
	{"flushed: the 17th write proves the flush after the 16th", Job{Writes: writes(17), FlushEvery: 8}, Flushed, 16},
	{"flushed: before the first flush, none", Job{Writes: writes(8), FlushEvery: 8}, Flushed, 0},
	{"flushed: a job that finished flushed everything", Job{Writes: writes(5), FlushEvery: 8, Finished: true}, Flushed, 5},
	{"flushed: no writes", Job{FlushEvery: 8}, Flushed, 0},
}

func TestAcknowledged(t *testing.T) {
	for _, tt := range acknowledgedTests {
		if got := len(tt.job.Acknowledged(tt.rule)); got != tt.want {
			t.Errorf("%s: len(Acknowledged) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestPromiseRule(t *testing.T) {
	for _, tt := range []struct {
		p    Promise
		want Rule
	}{
		{Promise{PLP: true, VWC: true, VWCKnown: true}, Completed},
		{Promise{VWCKnown: true}, Completed},
		{Promise{VWC: true, VWCKnown: true}, Flushed},
		{Promise{}, Flushed},
	} {
		if got, _ := tt.p.Rule(); got != tt.want {
			t.Errorf("%+v.Rule() = %v, want %v", tt.p, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	const tag, prev = 0x1234abcd, 0x99990001
	w := Write{8192, 4096}
	before := func(b []byte) bool { return string(b) == string(Expected(prev, 8192, 4096)) }
	for _, tt := range []struct {
		name string
		got  []byte
		want Found
		from int64
	}{
		{"intact", Expected(tag, 8192, 4096), Intact, 0},
		{"zeros", make([]byte, 4096), Zeros, 0},
		{"the earlier cycle's write", Expected(prev, 8192, 4096), Old, 0},
		{"another write's data", Expected(tag, 40960, 4096), Misplaced, 40960},
		{"foreign", []byte(strings.Repeat("x", 4096)), Other, 0},
		{"what the drive held before", []byte(strings.Repeat("y", 4096)), Old, 0},
	} {
		b := before
		if tt.name == "the earlier cycle's write" {
			b = nil // known by its own pattern, without a snapshot
		}
		if tt.name == "foreign" || tt.name == "what the drive held before" {
			b = func(got []byte) bool { return string(got) == strings.Repeat("y", 4096) }
		}
		f, from := Check(tt.got, w, tag, b)
		if f != tt.want || from != tt.from {
			t.Errorf("Check(%s) = %q, %d, want %q, %d", tt.name, f, from, tt.want, tt.from)
		}
	}
}

func TestExpectedMatchesFio(t *testing.T) {
	// fio 3.33, verify_pattern=0xdeadbeef%o, a 4 KiB write at 7311360:
	// deadbeef 00906f0000000000 repeated.
	got := Expected(0xdeadbeef, 7311360, 24)
	want := "deadbeef00906f0000000000deadbeef00906f0000000000"
	if h := hex(got); h != want {
		t.Errorf("Expected = %s, want %s", h, want)
	}
}

func hex(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(digits[c>>4])
		s.WriteByte(digits[c&15])
	}
	return s.String()
}

var judgeTests = []struct {
	name    string
	c       Cycle
	verdict string
	says    []string
}{
	{"did not return", Cycle{NotReturned: "/dev/nvme1n1 did not reappear within 30s", Acknowledged: 5}, Fail, []string{"did not return", "within 30s"}},
	{"lost zeros", Cycle{Acknowledged: 100, LostWrites: 3, LBA: 512, Rule: Completed.String(),
		Lost: []Lost{{Offset: 4096, Len: 12288, Found: Zeros}}}, Fail,
		[]string{"3 of 100 acknowledged writes lost", "LBA 8, 24 blocks", "zeros"}},
	{"lost to another write", Cycle{Acknowledged: 10, LostWrites: 1, LBA: 4096,
		Lost: []Lost{{Offset: 4096, Len: 4096, Found: Misplaced, From: 81920}}}, Fail,
		[]string{"another write's data", "the write to LBA 20"}},
	{"kept, counters rose", Cycle{Acknowledged: 10, Counters: []Counter{{"unsafe shutdowns", 4, 5}}}, Pass, []string{"all 10", "4 → 5"}},
	{"kept, counters still", Cycle{Acknowledged: 10, Counters: []Counter{{"unsafe shutdowns", 4, 4}}}, Inconclusive,
		[]string{"the drive did not see a power loss: check the cut command", "stayed at 4"}},
	{"kept, one counter of two still", Cycle{Acknowledged: 10, Counters: []Counter{{"unsafe shutdowns", 4, 5}, {"OCP PLP start count", 2, 2}}}, Inconclusive,
		[]string{"the drive did not see a power loss", "OCP PLP start count stayed at 2"}},
	{"kept, no counters", Cycle{Acknowledged: 10, NoCounters: "a loop device keeps no count of power losses"}, Pass,
		[]string{"no evidence the cut happened", "loop device", "judged on its data alone"}},
	{"the cut command failed", Cycle{NotRun: "the cut command failed (exit status 1): see cut.log"}, Inconclusive, []string{"not judged: the cut command failed"}},
	{"data does not read", Cycle{Acknowledged: 3, Error: "/dev/nvme1n1: reading back: offset 0: input/output error"}, Fail, []string{"input/output error"}},
	{"nothing acknowledged", Cycle{Completed: 7, Rule: Flushed.String()}, Inconclusive, []string{"no write was acknowledged"}},
	{"lost beats still counters", Cycle{Acknowledged: 10, LostWrites: 1, Lost: []Lost{{0, 4096, Old, 0}},
		Counters: []Counter{{"unsafe shutdowns", 4, 4}}}, Fail, []string{"old data"}},
	{"lost ranges without lost writes (altered)", Cycle{Acknowledged: 10, Lost: []Lost{{0, 4096, Zeros, 0}},
		Counters: []Counter{{"unsafe shutdowns", 4, 5}}}, Fail, []string{"disagrees with itself: 0 lost writes, 1 lost ranges"}},
	{"lost writes without ranges (altered)", Cycle{Acknowledged: 10, LostWrites: 2}, Fail, []string{"disagrees with itself"}},
	{"lost, none flushed", Cycle{Acknowledged: 100, LostWrites: 3, LBA: 512, Rule: Completed.String(), LostFlushed: ptr(0),
		Lost: []Lost{{Offset: 4096, Len: 12288, Found: Old}}}, Fail,
		[]string{"3 of 100 acknowledged writes lost", "came back as old data; none of them before a completed flush: each was completed and not yet flushed"}},
	{"lost, some flushed", Cycle{Acknowledged: 100, LostWrites: 3, LBA: 512, Rule: Completed.String(), LostFlushed: ptr(2),
		Lost: []Lost{{Offset: 4096, Len: 12288, Found: Zeros}}}, Fail,
		[]string{"came back as zeros; 2 of them before a completed flush, which a drive must keep whatever it promises"}},
	{"more flushed than lost (altered)", Cycle{Acknowledged: 100, LostWrites: 1, LostFlushed: ptr(2),
		Lost: []Lost{{Offset: 0, Len: 4096, Found: Zeros}}}, Fail, []string{"disagrees with itself: 1 lost writes, 2 of them flushed"}},
	{"every write at risk a rewrite", Cycle{Acknowledged: 10, AtRisk: 3, Rewritten: 3, NoCounters: "a loop device keeps no count of power losses"}, Inconclusive,
		[]string{"each of the 3 writes completed after its job's last flush rewrote a block", "raise size"}},
	{"one write at risk written once", Cycle{Acknowledged: 10, AtRisk: 3, Rewritten: 2, NoCounters: "a loop device keeps no count of power losses"}, Pass,
		[]string{"judged on its data alone"}},
	{"rewrites do not hide a loss", Cycle{Acknowledged: 10, AtRisk: 3, Rewritten: 3, LostWrites: 1, Lost: []Lost{{0, 4096, Old, 0}}}, Fail, []string{"old data"}},
	{"a job ended without error after the cut", Cycle{Acknowledged: 10, Unstopped: []string{"random"}, Counters: []Counter{{"unsafe shutdowns", 4, 5}}}, Inconclusive,
		[]string{"fio's job random ended without error after the cut started", "raise size"}},
	{"counters still beat an unstopped job", Cycle{Acknowledged: 10, Unstopped: []string{"random"}, Counters: []Counter{{"unsafe shutdowns", 4, 4}}}, Inconclusive,
		[]string{"the drive did not see a power loss"}},
	{"host cut soon after the writes", Cycle{Acknowledged: 10, CutGap: "150ms", MaxCutGap: "5s", NoCounters: "a loop device keeps no count of power losses"}, Pass,
		[]string{"the cut came 150ms after the drive's last write"}},
	{"host cut long after the writes", Cycle{Acknowledged: 10, CutGap: "6.2s", MaxCutGap: "5s", NoCounters: "a loop device keeps no count of power losses"}, Inconclusive,
		[]string{"not judged: the cut came 6.2s after the drive's last write, more than 5s"}},
	{"host cut, gap not measured", Cycle{Acknowledged: 10, MaxCutGap: "5s", NoCounters: "a loop device keeps no count of power losses"}, Inconclusive,
		[]string{"not judged: the gap between the drive's last write and the host's cut was not measured"}},
	{"a loss fails however late the cut", Cycle{Acknowledged: 10, CutGap: "6.2s", MaxCutGap: "5s", LostWrites: 1, Lost: []Lost{{0, 4096, Zeros, 0}}}, Fail, []string{"zeros"}},
}

func ptr(n int) *int { return &n }

// The writes at risk are each job's after its last completed flush; a
// rewrite is one to an offset written earlier in its job or by another.
func TestAtRisk(t *testing.T) {
	w := func(offs ...int64) []Write {
		var out []Write
		for _, o := range offs {
			out = append(out, Write{o * 4096, 4096})
		}
		return out
	}
	tests := []struct {
		name              string
		jobs              []Job
		atRisk, rewritten int
	}{
		// 10 writes, a flush every 4: the flush after the 8th is proven
		// by the 9th, so the 9th and 10th are at risk.
		{"written once", []Job{{Writes: w(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), FlushEvery: 4}}, 2, 0},
		{"wrapped: the last two rewrite", []Job{{Writes: w(0, 1, 2, 3, 4, 5, 6, 7, 0, 1), FlushEvery: 4}}, 2, 2},
		{"another job wrote it", []Job{{Writes: w(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), FlushEvery: 4}, {Writes: w(9), FlushEvery: 4}}, 3, 2},
		{"a finished job has none", []Job{{Writes: w(0, 1, 2, 3, 4, 5, 6, 7, 0, 1), FlushEvery: 4, Finished: true}}, 0, 0},
	}
	for _, tt := range tests {
		if a, r := AtRisk(tt.jobs); a != tt.atRisk || r != tt.rewritten {
			t.Errorf("%s: AtRisk = %d, %d; want %d, %d", tt.name, a, r, tt.atRisk, tt.rewritten)
		}
	}
}

// A lost write whose block a flushed write was to is counted, another
// is not.
func TestFlushedAmong(t *testing.T) {
	lost := []Lost{{Offset: 0, Len: 4096}, {Offset: 8192, Len: 4096}, {Offset: 65536, Len: 4096}}
	flushed := []Write{{0, 4096}, {4096, 4096}, {65536, 4096}}
	if got := FlushedAmong(lost, flushed); got != 2 {
		t.Errorf("FlushedAmong = %d, want 2 (offsets 0 and 65536)", got)
	}
	if got := FlushedAmong(lost, nil); got != 0 {
		t.Errorf("FlushedAmong with nothing flushed = %d, want 0", got)
	}
}

func TestJudge(t *testing.T) {
	for _, tt := range judgeTests {
		v := Judge(tt.c)
		if v.Verdict != tt.verdict {
			t.Errorf("%s: Judge = %s (%s), want %s", tt.name, v.Verdict, v.Message, tt.verdict)
		}
		for _, s := range tt.says {
			if !strings.Contains(v.Message, s) {
				t.Errorf("%s: Judge's message %q does not say %q", tt.name, v.Message, s)
			}
		}
	}
}

func TestRanges(t *testing.T) {
	lost := []Lost{{8192, 4096, Zeros, 0}, {0, 4096, Zeros, 0}, {4096, 4096, Zeros, 0}, {12288, 4096, Old, 0}, {65536, 4096, Zeros, 0}}
	got := Ranges(lost)
	want := []Lost{{0, 12288, Zeros, 0}, {12288, 4096, Old, 0}, {65536, 4096, Zeros, 0}}
	if len(got) != len(want) {
		t.Fatalf("Ranges = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Ranges[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}
