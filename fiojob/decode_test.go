package fiojob

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/drivequal/drivequal/fiojob/internal/nonfinite"
)

// sameAsEncodingJSON fails t when decodeFast decodes data without error
// into something other than what encoding/json decodes, or when
// encoding/json refuses what decodeFast accepted. decodeFast may fail where
// encoding/json does not: Parse then decodes with encoding/json.
func sameAsEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	var fast, exact fioOutput
	if err := decodeFast(data, &fast); err != nil {
		return
	}
	if err := json.Unmarshal(data, &exact); err != nil {
		t.Fatalf("decodeFast accepted %.200q, encoding/json refused it: %v", data, err)
	}
	if !reflect.DeepEqual(fast, exact) {
		t.Fatalf("decodeFast(%.200q) = %+v, encoding/json decoded %+v", data, fast, exact)
	}
}

// decodeCases are where a decoder of encoding/json's struct tags can
// differ from it while decoding without error.
var decodeCases = []string{
	`{"jobs":[{"jobname":"a","groupid":1}]}`,
	// Names without regard to case, but with regard to '_' and '-'
	// (encoding/json's folding; v2's ignores them).
	`{"JOBS":[{"JobName":"a","GROUPID":1,"Job_Runtime":7}]}`,
	`{"jobs":[{"job_name":"a","jobruntime":7,"job-runtime":8,"usrcpu":1,"sys-cpu":2}]}`,
	`{"jobs":[{"read":{"iobytes":1,"io-bytes":2,"bwbytes":3,"totalios":4,"latns":{"n":5},"clatns":{"bins":{"1":2}}}}]}`,
	`{"fioversion":"x","fio_version":"y","FIO VERSION":"z","clientstats":[{"jobname":"a"}]}`,
	// Unicode folding: ſ (U+017F) is s and K (U+212A) is k for encoding/json.
	"{\"job\u017F\":[{\"jobname\":\"a\",\"ho\u017Ftname\":\"h\"}],\"fio ver\u017Fion\":\"v\"}",
	"{\"jobs\":[{\"read\":{\"io_bytes\":1,\"bw_bytes\":2,\"lat_n\u017F\":{\"N\":3}}}]}",
	// An exact match beats an earlier or later case-insensitive one.
	`{"jobs":[{"JOBNAME":"a","jobname":"b","JobName":"c"}]}`,
	`{"jobs":[{"read":{"lat_ns":{"n":1,"N":2,"n":3}}}]}`,
	// Duplicate names: the last wins, merged into what the earlier decoded.
	`{"jobs":[{"jobname":"a","groupid":5}],"jobs":[{"jobname":"b"}]}`,
	`{"jobs":[{"jobname":"a"},{"jobname":"b"}],"jobs":[{"groupid":3}]}`,
	`{"jobs":[{"read":{"iops":1,"runtime":2}}],"jobs":[{"read":{"iops":3}}]}`,
	`{"jobs":[{"read":{"iops":1},"read":{"runtime":2}}]}`,
	`{"jobs":[{"jobname":"a","jobname":"b"}]}`,
	`{"jobs":[{"read":{"clat_ns":{"bins":{"1":2,"3":4}},"clat_ns":{"bins":{"5":6}}}}]}`,
	`{"jobs":[{"read":{"clat_ns":{"bins":{"1":2}},"clat_ns":{"bins":null}}}]}`,
	// null: no effect on a struct, number or string; nil for a slice.
	`{"jobs":[{"jobname":"a","jobname":null,"groupid":2,"groupid":null,"read":{"iops":1},"read":null}]}`,
	`{"jobs":[{"jobname":"a"}],"jobs":null}`,
	`{"jobs":null,"client_stats":[null,{"jobname":"a"},null]}`,
	`{"jobs":[{"read":{"lat_ns":null,"clat_ns":null}}]}`,
	`null`,
	// Strings: invalid UTF-8 and lone surrogates become U+FFFD.
	"{\"jobs\":[{\"jobname\":\"a\xffb\xc0\",\"hostname\":\"\\ud800x\\udc00\"}]}",
	`{"jobs":[{"jobname":"\ud83d\ude00 \u00e9\/\"\\","hostname":"\u0000"}]}`,
	"{\"jobs\":[{\"jobname\xff\":\"a\"}]}",
	// Numbers at the edges of their types.
	`{"jobs":[{"groupid":-0,"job_runtime":9223372036854775807,"usr_cpu":1e308,"sys_cpu":-4.9e-324,"error":0}]}`,
	`{"jobs":[{"usr_cpu":0.1e1,"sys_cpu":1E-2,"read":{"bw_bytes":123456789012345678901234567890}}]}`,
	// Counters past 2^53, where a decoder through float64 rounds.
	`{"jobs":[{"read":{"io_bytes":9007199254740993,"total_ios":4611686018427387904,"runtime":9223372036854775807,"lat_ns":{"N":9007199254740993,"mean":1},"clat_ns":{"bins":{"9007199254740993":9007199254740993,"2":9223372036854775807}}}}]}`,
	` {"jobs" : [ { "jobname" : "a" , "read" : { "clat_ns" : { "bins" : { "10" : 1 , "20" : 2 } } } } ] } `,
	// Elements that hold nothing, and lists that grow and shrink under
	// one name: each element decoded into what the earlier list left.
	`{"jobs":[{"jobname":"a"},null,{}],"client_stats":[]}`,
	`{"jobs":[{"jobname":"a","groupid":1},{"jobname":"b"},{"jobname":"c"},{"jobname":"d"},{"jobname":"e"}],"jobs":[{"groupid":2}],"jobs":[{},{},{},{"hostname":"h"},{},{}]}`,
	`{"client_stats":null,"client_stats":[{"jobname":"a"}],"client_stats":[]}`,
	// Unknown members of every kind are skipped.
	`{"x":{"jobs":[{"jobname":"b"}]},"jobs":[{"jobname":"a","options":{"rw":"read"},"latency_ns":{"2":0.0}}],"disk_util":[{"name":"d"}]}`,
}

// refusedCases are what decodeFast refuses, as encoding/json does: Parse
// then decodes with encoding/json, whose error is the one it returns.
var refusedCases = []string{
	`{"jobs":[{"groupid":9223372036854775808}]}`,
	`{"jobs":[{"groupid":1.0}]}`,
	`{"jobs":[{"usr_cpu":1e400}]}`,
	`{"jobs":[{"jobname":1}]}`,
	`{"jobs":{"jobname":"a"}}`,
	`{"jobs":[{"read":[1,2]}]}`,
	`{"jobs":[{"read":{"clat_ns":{"bins":[1]}}}]}`,
	`{"jobs":[{"jobname":"a"}],"x":[1,{"y":nul}]}`,
	`{"jobs":[]} {}`,
	`{"jobs":[],}`,
}

// Every case of decodeCases and every fixture's final report decodes the
// fast way, into what encoding/json decodes (so that a library update that
// made decodeFast refuse them, and Parse quietly fall back, fails here);
// every case of refusedCases is refused by both.
func TestDecodeFastSameAsEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		var v fioOutput
		if err := decodeFast([]byte(c), &v); err != nil {
			t.Errorf("decodeFast(%.200q): %v, want it decoded", c, err)
		}
		sameAsEncodingJSON(t, []byte(c))
	}
	for _, c := range refusedCases {
		var fast, exact fioOutput
		if decodeFast([]byte(c), &fast) == nil || json.Unmarshal([]byte(c), &exact) == nil {
			t.Errorf("%.200q: want it refused by decodeFast and encoding/json", c)
		}
	}
	for _, f := range fixtures(t) {
		data := readFixture(t, filepath.Base(f))
		_, last, _, err := split(data, false)
		if err != nil || last == nil {
			// A fixture of output fio did not finish: Parse must refuse it.
			if _, perr := Parse(data); perr == nil {
				t.Errorf("%s: no final report (%v), yet Parse read it", filepath.Base(f), err)
			}
			continue
		}
		var v fioOutput
		if err := decodeFast(nonfinite.Zero(last), &v); err != nil {
			t.Errorf("%s: decodeFast: %v", filepath.Base(f), err)
		}
		sameAsEncodingJSON(t, nonfinite.Zero(last))
	}
}

// FuzzDecodeFast checks that what decodeFast decodes without error is what
// encoding/json decodes.
func FuzzDecodeFast(f *testing.F) {
	for _, c := range append(slices.Clone(decodeCases), refusedCases...) {
		f.Add([]byte(c))
	}
	for _, p := range fixtures(f) {
		b := readFixture(f, filepath.Base(p))
		if _, last, _, err := split(b, false); err == nil && last != nil && len(last) <= 64<<10 {
			f.Add(nonfinite.Zero(last))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsEncodingJSON(t, data)
	})
}
