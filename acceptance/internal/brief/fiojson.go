package brief

import (
	"bytes"
	"fmt"
	"strings"
)

// object is a JSON object whose pairs keep the order they were added in,
// printed the way fio's json.c prints: two spaces per level, `"key" : value`,
// integers as %lld and floats as %f.
type object struct {
	pairs []pair
}

type pair struct {
	name  string
	value any // string, int64, float64, *object or []*object
}

func newObject() *object { return &object{} }

// str adds a string. Like fio, an empty string is left out: fio's
// json_create_value_string fails on it and the pair is never added.
func (o *object) str(name, v string) *object {
	if v != "" {
		o.pairs = append(o.pairs, pair{name, v})
	}
	return o
}

func (o *object) int(name string, v int64) *object {
	o.pairs = append(o.pairs, pair{name, v})
	return o
}

func (o *object) float(name string, v float64) *object {
	o.pairs = append(o.pairs, pair{name, v})
	return o
}

func (o *object) obj(name string, v *object) *object {
	o.pairs = append(o.pairs, pair{name, v})
	return o
}

func (o *object) array(name string, v []*object) *object {
	o.pairs = append(o.pairs, pair{name, v})
	return o
}

// marshal prints o as fio prints its root object, ending in a newline.
func (o *object) marshal() []byte {
	var b bytes.Buffer
	printObject(&b, o, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func indent(b *bytes.Buffer, level int) {
	for range level {
		b.WriteString("  ")
	}
}

// printObject prints o whose own value sits at level; its pairs go one deeper.
func printObject(b *bytes.Buffer, o *object, level int) {
	b.WriteString("{\n")
	for i, p := range o.pairs {
		if i > 0 {
			b.WriteString(",\n")
		}
		indent(b, level+1)
		fmt.Fprintf(b, "%q : ", p.name)
		printValue(b, p.value, level+1)
	}
	b.WriteString("\n")
	indent(b, level)
	b.WriteString("}")
}

// printArray prints a; an empty array comes out as fio prints it, "[\n\n  ]".
func printArray(b *bytes.Buffer, a []*object, level int) {
	b.WriteString("[\n")
	for i, v := range a {
		if i > 0 {
			b.WriteString(",\n")
		}
		indent(b, level+1)
		printObject(b, v, level+1)
	}
	b.WriteString("\n")
	indent(b, level)
	b.WriteString("]")
}

func printValue(b *bytes.Buffer, v any, level int) {
	switch v := v.(type) {
	case string:
		// fio escapes only '\' and '"'.
		r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
		b.WriteString(`"` + r.Replace(v) + `"`)
	case int64:
		fmt.Fprintf(b, "%d", v)
	case float64:
		fmt.Fprintf(b, "%f", v)
	case *object:
		printObject(b, v, level)
	case []*object:
		printArray(b, v, level)
	default:
		panic(fmt.Sprintf("brief: unsupported JSON value %T", v))
	}
}
