// Package bssplit reads fio's bssplit, block sizes and their shares of
// the I/Os, as a spec writes it.
package bssplit

import (
	"fmt"
	"strconv"
	"strings"
)

// Share is one block size of a bssplit and its share of the I/Os.
type Share struct {
	BS  int64 // bytes, a multiple of 512
	Pct int   // percent of the I/Os, 1..100
}

// MaxSizes is fio's most block sizes in one bssplit (BSSPLIT_MAX).
const MaxSizes = 64

// Parse reads s ("4k/60:16k/30:128k/10"): sizes by size (in bytes, as
// fio writes a block size) and whole shares 1..100 adding up to 100, one
// list for every direction (no commas). The error says what is wrong.
func Parse(s string, size func(string) (int64, error)) ([]Share, error) {
	if strings.Contains(s, ",") {
		return nil, fmt.Errorf("per-direction lists (commas) are not supported")
	}
	parts := strings.Split(s, ":")
	if len(parts) > MaxSizes {
		return nil, fmt.Errorf("%d sizes, more than fio's %d", len(parts), MaxSizes)
	}
	var out []Share
	sum := 0
	for _, p := range parts {
		sz, share, found := strings.Cut(p, "/")
		if !found {
			return nil, fmt.Errorf("%q has no /share", p)
		}
		bs, err := size(sz)
		if err != nil {
			return nil, fmt.Errorf("size %q: %v", sz, err)
		}
		if bs <= 0 || bs%512 != 0 {
			return nil, fmt.Errorf("size %q is %d bytes, not a multiple of 512", sz, bs)
		}
		pct, err := strconv.Atoi(strings.TrimSpace(share))
		if err != nil || pct < 1 || pct > 100 {
			return nil, fmt.Errorf("share %q of %s must be a whole percentage 1..100", share, sz)
		}
		out = append(out, Share{BS: bs, Pct: pct})
		sum += pct
	}
	if sum != 100 {
		return nil, fmt.Errorf("shares add up to %d, not 100", sum)
	}
	return out, nil
}

// Fio is shares as fio's job file takes them, sizes in bytes
// ("4096/60:65536/40"); "" for none.
func Fio(shares []Share) string {
	parts := make([]string, len(shares))
	for i, s := range shares {
		parts[i] = fmt.Sprintf("%d/%d", s.BS, s.Pct)
	}
	return strings.Join(parts, ":")
}
