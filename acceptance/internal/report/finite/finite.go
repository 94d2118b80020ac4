// Package finite finds the numbers JSON cannot carry (NaN, ±Inf) in a
// value, sets each to 0 and names it by its JSON path.
package finite

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Zero sets every NaN or ±Inf number held in *v (through fields,
// pointers, slices, arrays and maps) to 0, and says what each was, by
// its JSON name ("actual +Inf", "read_latency.mean_us NaN"). A figure
// fio's output cannot give (a latency mean that overflowed) has no place
// in results.json, which JSON cannot carry it in: the result holding it
// is failed for it (report.FailNonFinite), never the report left unwritten.
func Zero(v any) []string {
	var found []string
	walkFloats(reflect.ValueOf(v), "", &found)
	return found
}

func walkFloats(v reflect.Value, path string, found *[]string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkFloats(v.Elem(), path, found)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if path != "" {
				name = path + "." + name
			}
			walkFloats(v.Field(i), name, found)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkFloats(v.Index(i), fmt.Sprintf("%s[%d]", path, i), found)
		}
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.Float64 || v.Type().Elem().Kind() == reflect.Float32 {
			for _, k := range v.MapKeys() {
				if f := v.MapIndex(k).Float(); math.IsNaN(f) || math.IsInf(f, 0) {
					*found = append(*found, fmt.Sprintf("%s[%v] %v", path, k, f))
					v.SetMapIndex(k, reflect.Zero(v.Type().Elem()))
				}
			}
			return
		}
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			before := len(*found)
			walkFloats(e, fmt.Sprintf("%s[%v]", path, k), found)
			if len(*found) > before {
				v.SetMapIndex(k, e)
			}
		}
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); (math.IsNaN(f) || math.IsInf(f, 0)) && v.CanSet() {
			*found = append(*found, fmt.Sprintf("%s %v", path, f))
			v.SetFloat(0)
		}
	}
}
