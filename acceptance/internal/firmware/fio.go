package firmware

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

func files2readers(fs []*os.File) []io.Reader {
	out := make([]io.Reader, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

// fioResult is the load's error: a job's (a verify mismatch is EILSEQ),
// or fio's own when it wrote no output. fio stopped by SIGINT exits 0.
func fioResult(path string, waitErr error, stderr string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("fio wrote no output (%v): %v: %s", waitErr, err, strings.TrimSpace(stderr))
	}
	// fio may print notes before the JSON.
	if i := strings.IndexByte(string(b), '{'); i > 0 {
		b = b[i:]
	}
	var out struct {
		Jobs []struct {
			Name  string `json:"jobname"`
			Error int    `json:"error"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("fio's output %s: %w", path, err)
	}
	for _, j := range out.Jobs {
		if j.Error != 0 {
			return fmt.Errorf("fio job %s: error %d: %s", j.Name, j.Error, strings.TrimSpace(stderr))
		}
	}
	if waitErr != nil && len(out.Jobs) == 0 {
		return fmt.Errorf("fio: %v: %s", waitErr, strings.TrimSpace(stderr))
	}
	return nil
}
