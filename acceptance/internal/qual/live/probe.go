package live

import "github.com/drivequal/drivequal/acceptance/internal/plan"

// pathsOf is the paths of the drives of all at indices drives.
func pathsOf(all []plan.Drive, drives []int) []string {
	out := make([]string, len(drives))
	for i, d := range drives {
		out[i] = all[d].Path
	}
	return out
}
