package integrity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures are real fio 3.33 outputs of the suite's verify pass
// (fixtures/fio/README.md, record.sh): verify-* of the crc32c header
// check of older drivequal on two 32 MiB loop devices (drive0 /dev/loop9,
// drive1 /dev/loop10); readback-* of today's pattern read-back on two
// loop devices of 32 MiB + 90,112 bytes, the tail of IDEMA capacities
// (drive0 /dev/loop55, drive1 /dev/loop56).
func fixture(t *testing.T, name string) (stdout, stderr []byte) {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "fixtures", "fio")
	stdout, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	stderr, err = os.ReadFile(filepath.Join(dir, name+".stderr"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return stdout, stderr
}

var twoDrives = []Drive{
	{Path: "/dev/disk/by-id/a", Target: "/dev/loop9", Bytes: 32 << 20, LBASize: 512, Method: "crc32c"},
	{Path: "/dev/disk/by-id/b", Target: "/dev/loop10", Bytes: 32 << 20, LBASize: 4096, Method: "crc32c"},
}

// readBack is the two drives of the readback-* fixtures.
var readBack = []Drive{
	{Path: "/dev/disk/by-id/a", Target: "/dev/loop55", Bytes: 32<<20 + 90112, LBASize: 512},
	{Path: "/dev/disk/by-id/b", Target: "/dev/loop56", Bytes: 32<<20 + 90112, LBASize: 4096},
}

type judgeTest struct {
	name        string
	fixture     string
	runErr      string
	interrupted bool
	// refuse are words a drive's message must not hold.
	refuse   [][]string
	drives   []Drive
	verdicts []string
	// want are substrings of each drive's message.
	want [][]string
}

var judgeTests = []judgeTest{
	{name: "clean", fixture: "verify-clean", drives: twoDrives, verdicts: []string{Pass, Pass},
		want:   [][]string{{"every block read back as written: 33,554,432 bytes, crc32c checksum and header (offset, seed) of every 131,072-byte block"}, {"33,554,432 bytes", "crc32c"}},
		refuse: [][]string{{"pattern"}, {"pattern"}}},
	{name: "checksum", fixture: "verify-crc", runErr: "exit status 1", drives: twoDrives, verdicts: []string{Pass, Fail},
		want: [][]string{{"every block"}, {
			"/dev/disk/by-id/b returned different data than was written",
			"crc32c: verify failed at offset 1,048,576 (LBA 256, 32 blocks of 4096 bytes)",
			"expected crc32c da75d153, received e69546d3",
			"fio: crc32c: verify failed at file /dev/loop10 offset 1048576, length 131072",
		}}},
	// A resume after a reboot that swapped the two drives' paths: each
	// drive's path now is the other's target then. The mismatch fio named
	// on /dev/loop10 is the drive whose target it was, not the one at
	// that path now.
	{name: "checksum, drives swapped since", fixture: "verify-crc", runErr: "exit status 1", verdicts: []string{Pass, Fail},
		drives: []Drive{{Path: "/dev/loop10", Target: "/dev/loop9", Bytes: 32 << 20, LBASize: 512, Method: "crc32c"},
			{Path: "/dev/loop9", Target: "/dev/loop10", Bytes: 32 << 20, LBASize: 4096, Method: "crc32c"}},
		want: [][]string{{"every block"}, {"/dev/loop9 returned different data than was written", "at file /dev/loop10 offset 1048576"}}},
	{name: "header", fixture: "verify-header", runErr: "exit status 1", drives: twoDrives, verdicts: []string{Pass, Fail},
		want: [][]string{nil, {"verify: bad magic header 0, wanted acca at offset 2,097,152 (LBA 512, 32 blocks of 4096 bytes)"}}},
	{name: "short", fixture: "verify-clean", drives: []Drive{twoDrives[0], {Path: "b", Target: "/dev/loop10", Bytes: 64 << 20}},
		verdicts: []string{Pass, Fail}, want: [][]string{nil, {"read 33,554,432 of the 67,108,864 bytes written"}}},
	{name: "interrupted", fixture: "verify-clean", interrupted: true,
		drives:   []Drive{twoDrives[0], {Path: "b", Target: "/dev/loop10", Bytes: 64 << 20}},
		verdicts: []string{Pass, Inconclusive}, want: [][]string{nil, {"stopped after 33,554,432 of 67,108,864"}}},
	{name: "read-back clean, tail included", fixture: "readback-clean", drives: readBack, verdicts: []string{Pass, Pass},
		want:   [][]string{{"every block read back as written: 33,644,544 bytes", "this run's fill pattern"}, {"33,644,544 bytes"}},
		refuse: [][]string{{"crc32c"}, {"crc32c"}}},
	{name: "read-back: the last 4 KiB changed", fixture: "readback-tail", runErr: "exit status 1", drives: readBack,
		verdicts: []string{Pass, Fail}, want: [][]string{nil, {
			"/dev/disk/by-id/b returned other data, not what this run wrote",
			"pattern: verify failed at offset 33,636,352 (LBA 8,212, 2 blocks of 4096 bytes): byte 4096 of the block: expected 00, received 2b",
			"fio: got pattern '2b', wanted '00'. Bad bits 4 | bad pattern block offset 4096 | pattern: verify failed at file /dev/loop56 offset 33636352",
		}}},
	{name: "read-back: an earlier fill", fixture: "readback-earlier", runErr: "exit status 5", drives: readBack,
		verdicts: []string{Pass, Fail}, want: [][]string{nil, {
			"/dev/disk/by-id/b returned data of an earlier write, not what this run wrote",
			"byte 8 of the block: expected 11, received 22",
			"mismatched blocks reported",
		}}},
	{name: "read-back: zeros", fixture: "readback-zeros", runErr: "exit status 1", drives: readBack,
		verdicts: []string{Pass, Fail}, want: [][]string{nil, {
			"/dev/disk/by-id/b returned zeros, not what this run wrote",
			"at offset 2,097,152 (LBA 512, 32 blocks of 4096 bytes): byte 0 of the block: expected 44, received 00",
		}}},
	{name: "read-back: another offset's block", fixture: "readback-offset", runErr: "exit status 1", drives: readBack,
		verdicts: []string{Pass, Fail}, want: [][]string{nil, {
			"returned data written for another offset, not what this run wrote",
			"at offset 1,048,576",
		}}},
	{name: "one group for two drives", fixture: "verify-clean", drives: append(twoDrives[:2:2], Drive{Path: "c", Target: "/dev/loop11"}),
		verdicts: []string{Fail, Fail, Fail}, want: [][]string{{"fio reported 2 drive groups"}, nil, nil}},
}

func TestJudge(t *testing.T) {
	for _, tt := range judgeTests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr := fixture(t, tt.fixture)
			got := Judge(stdout, stderr, tt.runErr, tt.interrupted, tt.drives)
			if len(got) != len(tt.verdicts) {
				t.Fatalf("Judge() = %d results, want %d", len(got), len(tt.verdicts))
			}
			for i, r := range got {
				if r.Verdict != tt.verdicts[i] {
					t.Errorf("drive %d: verdict = %s, want %s (%s)", i, r.Verdict, tt.verdicts[i], r.Message)
				}
				for _, w := range tt.want[i] {
					if !strings.Contains(r.Message, w) {
						t.Errorf("drive %d: message = %q, want it to contain %q", i, r.Message, w)
					}
				}
				if i < len(tt.refuse) {
					for _, w := range tt.refuse[i] {
						if strings.Contains(r.Message, w) {
							t.Errorf("drive %d: message = %q, want it not to say %q", i, r.Message, w)
						}
					}
				}
			}
		})
	}
}

func TestJudgeGarbage(t *testing.T) {
	got := Judge([]byte("fio: this is not JSON\n"), nil, "exit status 1", false, twoDrives[:1])
	if got[0].Verdict != Fail || !strings.Contains(got[0].Message, "does not parse") {
		t.Errorf("Judge(garbage) = %+v, want a failure saying the output does not parse", got[0])
	}
}

func TestMismatchesCRC(t *testing.T) {
	_, stderr := fixture(t, "verify-crc")
	got := Mismatches(string(stderr))["/dev/loop10"]
	if len(got) != 1 {
		t.Fatalf("Mismatches() = %+v, want one for /dev/loop10", got)
	}
	m := got[0]
	if m.Offset != 1048576 || m.Length != 131072 || m.Check != "crc32c" || m.Expected != "da75d153" || m.Received != "e69546d3" {
		t.Errorf("Mismatches() = %+v, want offset 1048576, length 131072, crc32c da75d153 / e69546d3", m)
	}
}

// Each pattern mismatch carries the block, the first differing byte and
// what fio read and wanted there; the byte's place in the pattern says
// what the drive returned.
func TestMismatchesPattern(t *testing.T) {
	_, stderr := fixture(t, "readback-zeros")
	got := Mismatches(string(stderr))["/dev/loop56"]
	if len(got) != 1 {
		t.Fatalf("Mismatches() = %+v, want one for /dev/loop56", got)
	}
	want := Mismatch{Offset: 2097152, Length: 131072, Check: "pattern", Expected: "44", Received: "00", Byte: 0, Returned: Zeros}
	m := got[0]
	m.Fio = ""
	if m != want {
		t.Errorf("Mismatches() = %+v, want %+v", m, want)
	}
	for _, tt := range []struct {
		at   int64
		got  string
		want string
	}{
		{0, "00", Zeros}, {0, "2b", OtherData}, {3, "00", OtherData}, {8, "22", EarlierWrite}, {15, "ef", EarlierWrite},
		{16, "00", OtherOffset}, {23, "01", OtherOffset}, {24, "00", OtherData}, {4096, "2b", OtherData}, {-1, "", OtherData},
	} {
		if r := returned(tt.at, tt.got); r != tt.want {
			t.Errorf("returned(%d, %q) = %q, want %q", tt.at, tt.got, r, tt.want)
		}
	}
}
