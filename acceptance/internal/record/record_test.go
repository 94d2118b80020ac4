package record

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A sidecar written is read back; a missing one is not found; Forget
// removes a test's output and every sidecar, and nothing else.
func TestSidecars(t *testing.T) {
	dir := t.TempDir()
	const test = "TestSingleDrive/1GiB/4KB_Random_Read"
	require.NoError(t, WriteJSON(dir, test, ThermalExt, Thermal{Throttled: "thm_temp1_trans_count 0 → 3"}))
	var th Thermal
	found, err := ReadJSON(dir, test, ThermalExt, &th)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, "thm_temp1_trans_count 0 → 3", th.Throttled)

	var f Failure
	found, err = ReadJSON(dir, test, StatusExt, &f)
	require.NoError(t, err)
	require.False(t, found)

	require.NoError(t, os.WriteFile(Base(dir, test)+StatusExt, []byte("{"), 0o644))
	_, err = ReadJSON(dir, test, StatusExt, &f)
	require.ErrorContains(t, err, "4KB_Random_Read.status.json")

	other := filepath.Join(dir, "TestSingleDrive", "1GiB", "4KB_Random_Write.json")
	require.NoError(t, os.WriteFile(other, nil, 0o644))
	require.NoError(t, os.WriteFile(Base(dir, test)+OutputExt, nil, 0o644))
	require.NoError(t, Forget(dir, test))
	for _, ext := range []string{OutputExt, StatusExt, ThermalExt} {
		require.NoFileExists(t, Base(dir, test)+ext)
	}
	require.FileExists(t, other)
}

func TestMaxTemp(t *testing.T) {
	r := Run{MaxTempK: []int{310, 330}}
	require.Equal(t, 330, r.MaxTemp(1))
	require.Equal(t, 0, r.MaxTemp(2))
	require.Equal(t, "fio failed", (&Failure{Message: "fio failed"}).Error())
}
