package jsonlist

import "testing"

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
