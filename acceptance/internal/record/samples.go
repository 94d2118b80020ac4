package record

import "github.com/drivequal/drivequal/acceptance/internal/device/sample"

// Samples is run.json's data samples: the offsets read once for each
// drive size, the hashes per drive.
type Samples struct {
	// RegionBytes is the bytes each region holds (sample.RegionBytes).
	RegionBytes int64 `json:"region_bytes"`
	// Offsets is, by drive size in bytes, the byte offset of each region
	// read on a drive of that size: the same for every drive of it.
	Offsets map[int64][]int64 `json:"offsets"`
	// Drives is each drive's sample, by drive index.
	Drives []DriveSample `json:"drives"`
}

// DriveSample is one drive's data sample as last read.
type DriveSample struct {
	// Bytes is the drive's size when it was read; SHA256, the sha256
	// (hex) of each region at Offsets[Bytes]. Empty when it did not read
	// (Error says why).
	Bytes  int64    `json:"bytes"`
	SHA256 []string `json:"sha256,omitempty"`
	Error  string   `json:"error,omitempty"`
	// At is when it was read (RFC 3339, UTC); After, the step it was read
	// after ("setup" before the first).
	At    string `json:"at,omitempty"`
	After string `json:"after,omitempty"`
	// Wrote names the step that last wrote the drive ("3 fill: sequential
	// fill"); "" while none of the run's has.
	Wrote string `json:"wrote,omitempty"`
	// Writing names the step writing the drive now: set in run.json
	// before the step's first write, cleared once the sample after it is
	// recorded. A resume cannot ask the data of a drive marked so to
	// match: the step may have changed any block of it.
	Writing string `json:"writing,omitempty"`
	// PowerLoss is the folder under powerloss/ that holds the drive's
	// power-loss cycles, and PowerLossPaths each path the drive had when
	// one was written: a resume that finds the drive at another path
	// (renumbered, by its identity) files its cycles in the same folder,
	// and a cycle naming no path of its drive is filed under another.
	PowerLoss      string   `json:"power_loss,omitempty"`
	PowerLossPaths []string `json:"power_loss_paths,omitempty"`
}

// Print is drive i's recorded sample; ok is false when none was read.
func (s *Samples) Print(i int) (p sample.Print, ok bool) {
	if s == nil || i < 0 || i >= len(s.Drives) || len(s.Drives[i].SHA256) == 0 {
		return sample.Print{}, false
	}
	d := s.Drives[i]
	return sample.Print{Size: d.Bytes, Offsets: s.Offsets[d.Bytes], SHA256: d.SHA256}, true
}

// Sample is drive i's entry in run.json's samples, grown to n drives;
// the samples are made when there are none.
func (r *Run) Sample(i, n int) *DriveSample {
	if r.Samples == nil {
		r.Samples = &Samples{RegionBytes: sample.RegionBytes, Offsets: map[int64][]int64{}}
	}
	for len(r.Samples.Drives) < max(n, i+1) {
		r.Samples.Drives = append(r.Samples.Drives, DriveSample{})
	}
	return &r.Samples.Drives[i]
}

// SetPrint records p as drive i's sample, of n drives.
func (r *Run) SetPrint(i, n int, p sample.Print) {
	d := r.Sample(i, n)
	d.Bytes, d.SHA256, d.Error = p.Size, p.SHA256, ""
	if r.Samples.Offsets == nil {
		r.Samples.Offsets = map[int64][]int64{}
	}
	r.Samples.Offsets[p.Size] = p.Offsets
}
