package device

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func onNode(node int, cpus []int) Info { return Info{NUMANode: node, LocalCPUs: cpus} }

func repeat(in Info, n int) []Info {
	out := make([]Info, n)
	for i := range out {
		out[i] = in
	}
	return out
}

type placeTest struct {
	name   string
	drives []Info
	online []int
	want   []string
}

var (
	node0 = onNode(0, seq(0, 15))
	node1 = onNode(1, seq(16, 31))
	// Unknown topology: no node, or a node whose CPUs are not reported.
	unknown = Info{NUMANode: -1}
)

var placeTests = []placeTest{
	{
		name:   "two sockets, 4 drives each",
		drives: append(repeat(node0, 4), repeat(node1, 4)...),
		online: seq(0, 31),
		want:   []string{"0-3", "4-7", "8-11", "12-15", "16-19", "20-23", "24-27", "28-31"},
	},
	{
		name:   "two sockets, drives interleaved",
		drives: []Info{node0, node1, node0, node1},
		online: seq(0, 31),
		want:   []string{"0-7", "16-23", "8-15", "24-31"},
	},
	{
		// 12 drives per node of 8 CPUs: one CPU each, round-robin.
		name:   "24 drives on 2 nodes of 8 CPUs",
		drives: append(repeat(onNode(0, seq(0, 7)), 12), repeat(onNode(1, seq(8, 15)), 12)...),
		online: seq(0, 15),
		want: []string{
			"0", "1", "2", "3", "4", "5", "6", "7", "0", "1", "2", "3",
			"8", "9", "10", "11", "12", "13", "14", "15", "8", "9", "10", "11",
		},
	},
	{
		name:   "unknown topology, 3 drives on 2 CPUs",
		drives: repeat(unknown, 3),
		online: []int{0, 1},
		want:   []string{"0", "1", "0"},
	},
	{
		name:   "unknown topology, uneven split",
		drives: repeat(unknown, 3),
		online: seq(0, 7),
		want:   []string{"0-2", "3-5", "6-7"},
	},
	{
		// Known drives share their node; unknown ones share every online
		// CPU, including those of the nodes.
		name:   "mix",
		drives: []Info{node0, unknown, node1, node0, onNode(-1, seq(0, 31)), onNode(1, nil)},
		online: seq(0, 31),
		want:   []string{"0-7", "0-10", "16-31", "8-15", "11-21", "22-31"},
	},
	{
		// Offline local CPUs are not used; a node left with none falls back
		// to all online CPUs.
		name:   "offline CPUs",
		drives: []Info{onNode(0, seq(0, 3)), onNode(0, seq(0, 3)), onNode(1, []int{4, 5})},
		online: []int{1, 2, 3, 6, 7},
		want:   []string{"1-2", "3", "1-3,6-7"},
	},
	{
		name:   "no online CPUs",
		drives: []Info{node0, unknown},
		online: nil,
		want:   []string{"", ""},
	},
	{
		name:   "no drives",
		drives: nil,
		online: seq(0, 3),
		want:   []string{},
	},
}

func TestPlace(t *testing.T) {
	for _, tt := range placeTests {
		t.Run(tt.name, func(t *testing.T) {
			got := Place(tt.drives, tt.online)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Place mismatch (-want +got):\n%s", diff)
			}
			if len(tt.online) == 0 {
				return
			}
			for i, l := range got {
				if l == "" {
					t.Errorf("Place: drive %d got an empty CPU list", i)
				}
			}
		})
	}
}

// Place works from what Inspect reads: the fake two-socket tree's drives on
// node 0, node 1 and an unknown node.
func TestPlaceInspected(t *testing.T) {
	sys := buildTree(t, "two-sockets.tree")
	online, err := sys.OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	var drives []Info
	for _, p := range []string{"/dev/nvme0n1", "/dev/nvme1n1", byID, "/dev/nvme4n1"} {
		in, err := sys.Inspect(p)
		if err != nil {
			t.Fatal(err)
		}
		drives = append(drives, in)
	}
	got := Place(drives, online)
	want := []string{"0-7", "16-31", "8-15", "0-31"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Place mismatch (-want +got):\n%s", diff)
	}
}
