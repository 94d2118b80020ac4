package verdict

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/fiojob"
)

// A verify pass recorded before the fill wrote a pattern (run.json's
// verify has no "pattern") checked fio's crc32c header and checksum: a
// replay judges it with that method and says so, as it did; a pass of
// today's fill compared every byte with its pattern.
func TestVerifyMethodOfARecording(t *testing.T) {
	require.Equal(t, "crc32c", verifyMethod(record.Verify{Step: 3, Raw: "prepare/003-verify.json"}))
	require.Equal(t, fiojob.FillVerify, verifyMethod(record.Verify{Pattern: fiojob.FillPattern(1)}))
}
