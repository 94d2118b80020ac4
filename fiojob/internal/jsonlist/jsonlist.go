// Package jsonlist decodes a JSON list into a slice as encoding/json does, refusing a list of more elements than a bound before it decodes them.
package jsonlist

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrTooLong is the error of a list of more elements than the bound.
var ErrTooLong = errors.New("more elements than the list may hold")

// Decode reads the list dec is at into *p, for an unmarshaler of
// go-json-experiment/json: an element at a time, each with opts, each
// taken from *left, refusing the one past it before it decodes it (the
// lists of one document may share one *left). Its steps are those of
// encoding/json's decoding of a slice: an element within the slice's
// capacity is decoded into what is there, the slice grows by append's
// rule, an empty list is an empty slice and null a nil one.
func Decode[T any](dec *jsontext.Decoder, p *[]T, left *int, opts jsonv2.Options) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		*p = nil
		return nil
	case '[':
	default:
		return errors.New("not a list")
	}
	s := *p
	i := 0
	for dec.PeekKind() != ']' {
		if *left <= 0 {
			return ErrTooLong
		}
		*left--
		if i >= cap(s) {
			s = slices.Grow(s, 1)
		}
		if i >= len(s) {
			s = s[:i+1]
		}
		if err := jsonv2.UnmarshalDecode(dec, &s[i], opts); err != nil {
			return err
		}
		i++
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if i == 0 {
		s = []T{}
	}
	*p = s[:i]
	return nil
}

// Unmarshal is encoding/json's json.Unmarshal(data, p) for an
// UnmarshalJSON method: data is one valid JSON value, whose elements,
// when it is a list, it counts first, refusing more than most.
func Unmarshal[T any](data []byte, p *[]T, most int) error {
	if Len(data, most+1) > most {
		return ErrTooLong
	}
	return json.Unmarshal(data, p)
}

// Len is the number of elements of the JSON list data (a valid JSON
// value), counted up to most; 0 when data is not a list.
func Len(data []byte, most int) int {
	depth, commas, any := 0, 0, false
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case ']', '}':
			depth--
			continue
		case ',':
			if depth == 1 {
				if commas++; commas+1 >= most {
					return most
				}
			}
			continue
		}
		if depth == 0 && c != '[' {
			return 0
		}
		if depth == 1 {
			any = true
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		}
	}
	if !any {
		return 0
	}
	return commas + 1
}

// Total counts the elements of the lists that the JSON object data gives
// under any of names, as encoding/json matches a member's name to a
// field's (folding case; a name given again counts again), and returns
// their number, or, when there are more than most, most+1 and the offset
// in data of the first past it (at is -1 otherwise). It reads as
// encoding/json does (invalid UTF-8 and duplicate names allowed); data
// not an object counts 0, and a syntax error ends the count (check data
// first: decoding it reports the error).
func Total(data []byte, most int, names ...string) (n int, at int64) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return 0, -1
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return n, -1
		}
		name := tok.String()
		if dec.PeekKind() != '[' || !slices.ContainsFunc(names, func(s string) bool { return strings.EqualFold(s, name) }) {
			if dec.SkipValue() != nil {
				return n, -1
			}
			continue
		}
		dec.ReadToken()
		for ; dec.PeekKind() != ']'; n++ {
			if n == most {
				at := dec.InputOffset() // just past the element before
				for at < int64(len(data)) && strings.IndexByte(", \t\r\n", data[at]) >= 0 {
					at++
				}
				return n + 1, at
			}
			if dec.SkipValue() != nil {
				return n, -1
			}
		}
		dec.ReadToken()
	}
	return n, -1
}
