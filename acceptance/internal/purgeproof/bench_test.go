package purgeproof

import (
	"crypto/rand"
	"testing"
)

// BenchmarkTally is the CPU cost of judging a read-back, a MiB at a time:
// zeros promised zeros (a purged drive), random bytes promised anything
// but the old data (a crypto erase: each 4 KiB block hashed and compared
// with its hash before), and random bytes promised zeros.
func BenchmarkTally(b *testing.B) {
	for _, c := range []struct {
		name string
		p    Promise
	}{{"zeros", Promise{}}, {"random", Promise{Changed: true}}, {"random, zeros promised", Promise{}}} {
		buf := make([]byte, MiB)
		var before *Sums
		if c.name != "zeros" {
			rand.Read(buf)
			// the blocks held other bytes before: each is hashed
			old := make([]byte, MiB)
			rand.Read(old)
			before = NewSums([]Extent{{0, MiB}})
			before.Put(0, old)
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
