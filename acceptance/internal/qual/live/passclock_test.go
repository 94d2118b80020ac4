package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A drive that went before fio first named a failed read of it, or
// within goneSlack after (seen by a later look), was pulled: its failed
// reads are what reads of a drive going give. One that went later than
// that failed first and died after: what fio read of it is its own. A
// drive fio named no failed read of went without a word from fio.
func TestWentFirst(t *testing.T) {
	at := time.Date(2026, 12, 4, 15, 57, 15, 0, time.UTC)
	for _, c := range []struct {
		name         string
		gone, failed time.Time
		want         bool
	}{
		{"gone, then a failed read", at, at.Add(time.Millisecond), true},
		{"a failed read, gone seen at the next look", at.Add(goneSeenEvery), at, true},
		{"a failed read, gone seen as late as the slack allows", at.Add(goneSlack), at, true},
		{"a failed read, gone 10 s later", at.Add(10 * time.Second), at, false},
		{"a failed read, never seen gone during the pass", time.Time{}, at, false},
		{"gone, no failed read named", at, time.Time{}, true},
	} {
		assert.Equal(t, c.want, wentFirst(c.gone, c.failed), c.name)
	}
}
