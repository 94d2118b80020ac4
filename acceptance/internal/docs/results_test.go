package docs

import (
	"reflect"
	"strings"
	"testing"

	qreport "github.com/drivequal/drivequal/acceptance/internal/report"
)

// ResultsPage is the page that documents results.json's fields.
const ResultsPage = "docs/results.md"

// jsonFields are the JSON names of t's fields, as encoding/json writes them.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// TestResultsFieldsDocumented: every field results.json has at its top,
// in each drive and in each result (report.Run, report.Drive,
// report.Result) is named in a code span on docs/results.md.
func TestResultsFieldsDocumented(t *testing.T) {
	var page Page
	for _, p := range pages(t) {
		if p.Path == ResultsPage {
			page = p
		}
	}
	if page.Path == "" {
		t.Fatalf("%s is missing: it documents results.json", ResultsPage)
	}
	report(t, ResultsFields(page, map[string]reflect.Type{
		"":        reflect.TypeOf(qreport.Run{}),
		"drives":  reflect.TypeOf(qreport.Drive{}),
		"results": reflect.TypeOf(qreport.Result{}),
	}))
}

// ResultsFields checks that each JSON field of types (by the results.json
// array that holds them, "" for the top) is named in a code span of page.
func ResultsFields(page Page, types map[string]reflect.Type) []Problem {
	spans := map[string]bool{}
	for _, s := range codeSpans(page.Text) {
		spans[s] = true
	}
	var out []Problem
	for _, where := range []string{"", "drives", "results"} {
		typ, ok := types[where]
		if !ok {
			continue
		}
		in := "at the top"
		if where != "" {
			in = "in each of `" + where + "`"
		}
		for _, f := range jsonFields(typ) {
			if !spans[f] {
				out = append(out, Problem{File: page.Path, Msg: "results.json field `" + f + "` (" + in + ", " + typ.String() + ") is named nowhere on the page: add it, in a code span, to the results.json item with what it holds"})
			}
		}
	}
	return out
}

// TestResultsFieldsUndocumented: a field the page names only in prose,
// or not at all, is a problem; one in a code span is none, and a field
// encoding/json leaves out is not asked for.
func TestResultsFieldsUndocumented(t *testing.T) {
	type top struct {
		Spec    string `json:"spec"`
		Started string `json:"started,omitempty"`
		Hidden  string `json:"-"`
	}
	type drive struct {
		Path string `json:"path"`
		NUMA int    `json:"numa_node"`
	}
	page := Page{Path: ResultsPage, Text: "# R\n\n`spec`, started, and each drive's `path`.\n"}
	want(t, ResultsFields(page, map[string]reflect.Type{"": reflect.TypeOf(top{}), "drives": reflect.TypeOf(drive{})}),
		"docs/results.md: results.json field `started` (at the top, docs.top) is named nowhere on the page",
		"docs/results.md: results.json field `numa_node` (in each of `drives`, docs.drive) is named nowhere on the page",
	)
}
