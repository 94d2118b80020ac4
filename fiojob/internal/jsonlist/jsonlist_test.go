package jsonlist

import (
	"errors"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Len counts a list's elements whatever they hold, up to most.
func TestLen(t *testing.T) {
	for _, tt := range []struct {
		data string
		most int
		want int
	}{
		{`[]`, 10, 0},
		{` [ ] `, 10, 0},
		{`null`, 10, 0},
		{`{"a":[1,2,3]}`, 10, 0},
		{`"[1,2]"`, 10, 0},
		{`[1]`, 10, 1},
		{`[null,true,false,-1.5e3,"",{},[]]`, 10, 7},
		{`[{"a":[1,2,3],"b":{"c":4,"d":5}},[6,7],8]`, 10, 3},
		{`["a,b","c]d","e\",f","g\\",{"h,":"],["}]`, 10, 5},
		{"[\n  {},\n  {}\n]\n", 10, 2},
		{`[1,2,3,4,5,6]`, 4, 4},
		{`[1,2,3,4]`, 4, 4},
		{`[1,2,3]`, 4, 3},
	} {
		if got := Len([]byte(tt.data), tt.most); got != tt.want {
			t.Errorf("Len(%s, %d) = %d, want %d", tt.data, tt.most, got, tt.want)
		}
	}
}

// Total counts the elements of every list an object gives under the
// names, matched as encoding/json matches a field's name, and of no other
// member, past most saying where the first past it is; what it read
// before a syntax error counts.
func TestTotal(t *testing.T) {
	names := []string{"jobs", "client_stats"}
	for _, tt := range []struct {
		data string
		most int
		want int
		at   int64
	}{
		{`[1,2]`, 10, 0, -1},
		{`null`, 10, 0, -1},
		{`{}`, 10, 0, -1},
		{`{"jobs":[1,2],"client_stats":[3]}`, 10, 3, -1},
		{`{"jobs":[1,2],"jobs":null,"jobs":[3,4],"jobs":[]}`, 10, 4, -1},
		{`{"JOBS":[1],"Client_Stats":[2],"jobſ":[3],"\u006aobs":[4]}`, 10, 4, -1},
		{`{"job":[1],"jobs2":[2],"clientstats":[3],"client-stats":[4],"x":{"jobs":[5]},"y":[{"jobs":[6]}]}`, 10, 0, -1},
		{`{"jobs":{"a":[1,2]},"jobs":"[1,2]","jobs":[[1,2],{"jobs":[3]}]}`, 10, 2, -1},
		{"{\"jobs\":[1,\"\xff\"],\"jobs\":[2]}", 10, 3, -1},
		{`{"jobs":[1,2,3],"jobs":[4,5,6]}`, 4, 5, 26},
		{`{"jobs":[1,2,3],"client_stats":[4]}`, 4, 4, -1},
		{`{"jobs":[1,2,3],"client_stats":[4, 5]}`, 4, 5, 35},
		{`{"jobs":[1,2],"x":nan,"jobs":[3]}`, 10, 2, -1},
		{`{"jobs":[1,2,}`, 10, 2, -1},
	} {
		if got, at := Total([]byte(tt.data), tt.most, names...); got != tt.want || at != tt.at {
			t.Errorf("Total(%s, %d) = %d, %d; want %d, %d", tt.data, tt.most, got, at, tt.want, tt.at)
		}
	}
}

// The lists Decode reads with one budget share it: past it, the next
// element is refused, whichever list it is in.
func TestDecodeSharesItsBudget(t *testing.T) {
	left := 3
	decode := func(data string) ([]int, error) {
		var s []int
		err := jsonv2.Unmarshal([]byte(data), &s, jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, p *[]int) error {
			return Decode(dec, p, &left, nil)
		})))
		return s, err
	}
	if s, err := decode(`[1,2]`); err != nil || len(s) != 2 || left != 1 {
		t.Errorf("first list: %v, %v, %d left; want [1 2], nil, 1 left", s, err, left)
	}
	if s, err := decode(`[3]`); err != nil || len(s) != 1 || left != 0 {
		t.Errorf("second list: %v, %v, %d left; want [3], nil, 0 left", s, err, left)
	}
	if _, err := decode(`[4]`); !errors.Is(err, ErrTooLong) {
		t.Errorf("third list: %v, want ErrTooLong", err)
	}
	if s, err := decode(`[]`); err != nil || s == nil || len(s) != 0 {
		t.Errorf("an empty list past the budget: %#v, %v; want an empty slice", s, err)
	}
}
