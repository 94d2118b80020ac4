package purgeproof

import (
	"crypto/rand"
	"testing"
)

// BenchmarkTally is the CPU cost of judging a read-back, a MiB at a time:
// zeros promised zeros (a purged drive), and random bytes (a crypto erase,
// with the before-hashes).
func BenchmarkTally(b *testing.B) {
	for _, c := range []struct {
		name string
		p    Promise
	}{{"zeros", Promise{}}, {"random", Promise{Changed: true}}} {
		buf := make([]byte, MiB)
		var before *Sums
		if c.name == "random" {
			rand.Read(buf)
			before = NewSums([]Extent{{0, MiB}})
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(MiB)
			for i := 0; i < b.N; i++ {
				u := Tally{Sector: 512}
				u.Add(0, buf, c.p, Fills{0x5eed5eed5eed0002}, before)
			}
		})
	}
}
