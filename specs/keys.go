package specs

import "strings"

// Keys returns every key a spec may hold, read from the schema the parser
// checks a file against, in the order it lists them. A key is its dotted
// path from the top of the file: "method.runtime", "workload.name" for a
// key of each [[workload]], and "*" where the spec chooses the name
// ("capacity.spec.*", "capacity.qos.*.read_p99_us"). A key that holds a
// table is listed by the keys in it, not by itself. The documentation's
// key reference is checked against this list.
func Keys() []string {
	var out []string
	var walk func(prefix []string, s *schema)
	walk = func(prefix []string, s *schema) {
		for _, name := range s.names {
			path := append(append([]string(nil), prefix...), name)
			if sub := s.keys[name]; sub != nil {
				walk(path, sub)
				continue
			}
			out = append(out, strings.Join(path, "."))
		}
	}
	walk(nil, specSchema)
	return out
}
