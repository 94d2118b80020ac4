package signature

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// patch is bytes to place at an offset of a test image; a negative offset
// counts from the end.
type patch struct {
	off  int64
	data []byte
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// mbrEntry returns a boot signature plus one partition entry of type typ.
func mbr(typ byte) []patch {
	return []patch{{446 + 4, []byte{typ}}, {510, []byte{0x55, 0xAA}}}
}

type signaturesTest struct {
	name    string
	size    int64
	patches []patch
	want    []string
}

const mdMagic = 0xa92b4efc

var signaturesTests = []signaturesTest{
	{"zeros", 4 << 20, nil, nil},
	{"tiny file", 3, []patch{{0, []byte("XFS")}}, nil},
	{"dos", 4 << 20, mbr(0x83), []string{"dos at offset 510"}},
	{"boot signature without partitions", 4 << 20, []patch{{510, []byte{0x55, 0xAA}}}, nil},
	{"gpt 512", 4 << 20, append(mbr(0xEE), patch{512, []byte("EFI PART")}, patch{-512, []byte("EFI PART")}),
		[]string{"PMBR at offset 510", "gpt at offset 512", "gpt-backup at offset 4193792"}},
	{"gpt 4096", 4 << 20, append(mbr(0xEE), patch{4096, []byte("EFI PART")}, patch{-4096, []byte("EFI PART")}),
		[]string{"PMBR at offset 510", "gpt at offset 4096", "gpt-backup at offset 4190208"}},
	{"gpt backup only", 4 << 20, []patch{{-512, []byte("EFI PART")}}, []string{"gpt-backup at offset 4193792"}},
	{"ext4", 4 << 20, []patch{{1080, []byte{0x53, 0xEF}}, {1048, le32(2)}}, []string{"ext2/3/4 at offset 1080"}},
	{"ext magic with impossible block size", 4 << 20, []patch{{1080, []byte{0x53, 0xEF}}, {1048, le32(77)}}, nil},
	{"xfs", 4 << 20, []patch{{0, []byte("XFSB")}}, []string{"xfs at offset 0"}},
	{"btrfs", 4 << 20, []patch{{65600, []byte("_BHRfS_M")}}, []string{"btrfs at offset 65600"}},
	{"swap", 4 << 20, []patch{{4086, []byte("SWAPSPACE2")}}, []string{"swap at offset 4086"}},
	{"old swap", 4 << 20, []patch{{4086, []byte("SWAP-SPACE")}}, []string{"swap at offset 4086"}},
	{"swap 64k pages", 4 << 20, []patch{{65526, []byte("SWAPSPACE2")}}, []string{"swap at offset 65526"}},
	{"lvm sector 1", 4 << 20, []patch{{512, []byte("LABELONE")}, {536, []byte("LVM2 001")}}, []string{"LVM2_member at offset 512"}},
	{"lvm label without type", 4 << 20, []patch{{512, []byte("LABELONE")}}, nil},
	{"md 1.2", 4 << 20, []patch{{4096, le32(mdMagic)}}, []string{"linux_raid_member at offset 4096"}},
	{"md 1.1", 4 << 20, []patch{{0, le32(mdMagic)}}, []string{"linux_raid_member at offset 0"}},
	// 0.90: size rounded down to 64 KiB, minus 64 KiB.
	{"md 0.90", 4<<20 + 1000, []patch{{4<<20 - 64<<10, le32(mdMagic)}}, []string{"linux_raid_member at offset 4128768"}},
	// 1.0: size minus 8 KiB, rounded down to 4 KiB.
	{"md 1.0", 4<<20 + 1000, []patch{{4<<20 - 8<<10, le32(mdMagic)}}, []string{"linux_raid_member at offset 4186112"}},
	{"md big endian", 4 << 20, []patch{{4096, []byte{0xa9, 0x2b, 0x4e, 0xfc}}}, nil},
	{"vfat", 4 << 20, []patch{{82, []byte("FAT32   ")}, {510, []byte{0x55, 0xAA}}, {446 + 4, []byte{0x0c}}}, []string{"vfat at offset 54"}},
	{"ntfs", 4 << 20, []patch{{3, []byte("NTFS    ")}, {510, []byte{0x55, 0xAA}}}, []string{"ntfs at offset 3"}},
	{"iso9660", 4 << 20, []patch{{32769, []byte("CD001")}}, []string{"iso9660 at offset 32769"}},
	{"between the probed ends", 8 << 20, []patch{{4 << 20, []byte("XFSB")}}, nil},
}

func writeImage(t *testing.T, size int64, patches []patch) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "img")
	b := make([]byte, size)
	for _, p := range patches {
		off := p.off
		if off < 0 {
			off += size
		}
		copy(b[off:], p.data)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSignatures(t *testing.T) {
	for _, tt := range signaturesTests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeImage(t, tt.size, tt.patches)
			got, err := Find(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Find mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Random data, as a drive holds after a fio run, shows no signature.
func TestSignaturesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		b := make([]byte, 2<<20)
		for j := 0; j < len(b); j += 8 {
			binary.LittleEndian.PutUint64(b[j:], r.Uint64())
		}
		path := filepath.Join(t.TempDir(), "img")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := Find(path); err != nil || len(got) != 0 {
			t.Errorf("Find(random image %d) = %q, %v, want none", i, got, err)
		}
	}
}

func TestSignaturesMissing(t *testing.T) {
	_, err := Find(filepath.Join(t.TempDir(), "missing"))
	if err == nil {
		t.Error("Find(missing file) = nil error")
	}
}

// wipefsSignatures lists what wipefs finds on path, in Find's terms.
func wipefsSignatures(t *testing.T, path string, size int64) []string {
	t.Helper()
	out, err := exec.Command("wipefs", "--no-act", "--json", path).Output()
	if err != nil {
		t.Fatalf("wipefs --no-act --json %s: %v", path, err)
	}
	var res struct {
		Signatures []struct {
			Offset string `json:"offset"`
			Type   string `json:"type"`
		} `json:"signatures"`
	}
	if len(bytes.TrimSpace(out)) > 0 {
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("parsing wipefs output %q: %v", out, err)
		}
	}
	var sigs []string
	for _, s := range res.Signatures {
		off, err := strconv.ParseInt(s.Offset, 0, 64)
		if err != nil {
			t.Fatalf("wipefs offset %q: %v", s.Offset, err)
		}
		typ := s.Type
		switch {
		case typ == "ext2" || typ == "ext3" || typ == "ext4":
			typ = "ext2/3/4"
		case typ == "gpt" && off > size/2:
			typ = "gpt-backup"
		}
		sigs = append(sigs, fmt.Sprintf("%s at offset %d", typ, off))
	}
	slices.Sort(sigs)
	return sigs
}

type toolImageTest struct {
	name  string
	steps [][]string // commands; "IMG" is replaced by the image path, a leading "<TEXT" is stdin
}

var toolImageTests = []toolImageTest{
	{"mkfs.ext4", [][]string{{"mkfs.ext4", "-q", "-F", "IMG"}}},
	{"mkswap", [][]string{{"mkswap", "-q", "IMG"}}},
	{"sfdisk gpt", [][]string{{"<label: gpt\n,,L\n", "sfdisk", "-q", "IMG"}}},
	{"sfdisk dos", [][]string{{"<label: dos\n,,L\n", "sfdisk", "-q", "IMG"}}},
	{"ext4 then gpt", [][]string{{"mkfs.ext4", "-q", "-F", "IMG"}, {"<label: gpt\n,,L\n", "sfdisk", "-q", "--wipe", "never", "IMG"}}},
}

// Find agrees with wipefs, offset for offset, on images made by the
// real tools.
func TestSignaturesMatchWipefs(t *testing.T) {
	for tool, pkg := range map[string]string{"wipefs": "util-linux", "mkfs.ext4": "e2fsprogs", "mkswap": "util-linux", "sfdisk": "fdisk"} {
		testenv.MustHave(t, tool, "apt-get install "+pkg)
	}
	const size = 64 << 20
	for _, tt := range toolImageTests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "img")
			if err := os.Truncate(createEmpty(t, path), size); err != nil {
				t.Fatal(err)
			}
			for _, step := range tt.steps {
				var stdin string
				if strings.HasPrefix(step[0], "<") {
					stdin, step = step[0][1:], step[1:]
				}
				args := slices.Clone(step)
				for i, a := range args {
					if a == "IMG" {
						args[i] = path
					}
				}
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Stdin = strings.NewReader(stdin)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			want := wipefsSignatures(t, path, size)
			if len(want) == 0 {
				t.Fatalf("wipefs found nothing on the %s image", tt.name)
			}
			got, err := Find(path)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Find differs from wipefs (-wipefs +Find):\n%s", diff)
			}
		})
	}
}

func createEmpty(t *testing.T, path string) string {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func BenchmarkSignatures(b *testing.B) {
	path := filepath.Join(b.TempDir(), "img")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Truncate(path, 64<<20); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(2 * probeSpan)
	for b.Loop() {
		if _, err := Find(path); err != nil {
			b.Fatal(err)
		}
	}
}
