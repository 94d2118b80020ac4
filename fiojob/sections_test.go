package fiojob

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// span is one job section's range of its file, from a job file.
type span struct {
	name             string
	offset, size, bs int64
	loops            int
	pattern, waitFor string
	file             string
}

// spans reads the sections of a job file made by File.
func spans(t *testing.T, file string) []span {
	t.Helper()
	var out []span
	global := map[string]string{}
	var cur map[string]string
	var name string
	flush := func() {
		if cur == nil {
			return
		}
		get := func(k string) string {
			if v, ok := cur[k]; ok {
				return v
			}
			return global[k]
		}
		num := func(k string) int64 {
			v := get(k)
			if v == "" {
				return 0
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("section %s: %s=%q", name, k, v)
			}
			return n
		}
		out = append(out, span{name: name, offset: num("offset"), size: num("size"), bs: num("bs"),
			loops: int(num("loops")), pattern: get("verify_pattern"), waitFor: cur["wait_for"], file: cur["filename"]})
	}
	sc := bufio.NewScanner(strings.NewReader(file))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "[global]"):
			cur = nil
		case strings.HasPrefix(line, "["):
			flush()
			name, cur = strings.Trim(line, "[]"), map[string]string{}
		case strings.Contains(line, "="):
			k, v, _ := strings.Cut(line, "=")
			if cur == nil {
				global[k] = v
			} else {
				cur[k] = v
			}
		}
	}
	flush()
	return out
}

// Every byte of a target is written by each pass of the fill and read
// once by the read-back, whatever its size (a multiple of 512 bytes) and
// the number of jobs: the sections of each pass, and of the read-back,
// cover [0, size) with no gap and no overlap, each in whole blocks of its
// bs, and none ends past the target's size. The last pass's sections
// each wait for the earlier passes' section over the same range.
func TestSectionsCoverEveryByte(t *testing.T) {
	sizes := []int64{
		1920383410176, 3840755982336, 7681501126656, 15362991415296, // IDEMA
		64 << 20, 64<<20 + 90112, 64<<20 + 4096, 64<<20 + 512, 64<<20 + 90112 + 512,
		128 << 10, 128<<10 + 512, 9*128<<10 + 4096, 31*128<<10 + 90624,
	}
	for _, size := range sizes {
		for _, passes := range []int{1, 2, 3} {
			for _, jobs := range []int{1, 2, 3, 7, 8, 9, 16} {
				fill := Fill([]Target{{Path: "/dev/nvme0n1", Size: size}}, passes, 0xabcdef0123456789)
				read := VerifyPass(fill, jobs)
				for _, j := range []Job{fill, read} {
					name := fmt.Sprintf("%s/size=%d/passes=%d/jobs=%d", j.Name, size, passes, jobs)
					if err := j.Validate(); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					byPattern := map[string][]span{}
					sections := map[string]span{}
					for _, s := range spans(t, j.File()) {
						byPattern[s.pattern] = append(byPattern[s.pattern], s)
						sections[s.name] = s
					}
					wantPatterns := 1
					if j.Writes() && passes > 1 {
						wantPatterns = 2
					}
					if len(byPattern) != wantPatterns {
						t.Fatalf("%s: %d patterns, want %d", name, len(byPattern), wantPatterns)
					}
					for p, ss := range byPattern {
						sort.Slice(ss, func(a, b int) bool { return ss[a].offset < ss[b].offset })
						at, loops := int64(0), -1
						for _, s := range ss {
							if s.offset != at || s.size <= 0 || s.bs <= 0 || s.size%s.bs != 0 || s.offset%s.bs != 0 {
								t.Fatalf("%s: pattern %s: section %s [%d, +%d) at bs %d, want it to start at %d in whole blocks", name, p, s.name, s.offset, s.size, s.bs, at)
							}
							if loops >= 0 && s.loops != loops {
								t.Fatalf("%s: section %s loops %d, the others %d", name, s.name, s.loops, loops)
							}
							loops = s.loops
							if s.waitFor != "" {
								w, ok := sections[s.waitFor]
								if !ok || w.offset != s.offset || w.size != s.size || w.bs != s.bs {
									t.Fatalf("%s: section %s waits for %q, not the section over its range", name, s.name, s.waitFor)
								}
							}
							at += s.size
						}
						if at != size {
							t.Fatalf("%s: pattern %s: sections end at %d, want %d", name, p, at, size)
						}
						if p == j.VerifyPattern && loops != 1 {
							t.Fatalf("%s: the last pass's sections run %d loops, want 1", name, loops)
						}
						if p == j.EarlierPattern && loops != passes-1 {
							t.Fatalf("%s: the earlier passes' sections run %d loops, want %d", name, loops, passes-1)
						}
					}
				}
			}
		}
	}
}
