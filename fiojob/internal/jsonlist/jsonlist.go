// Package jsonlist decodes a JSON list into a slice as encoding/json does, refusing a list of more elements than a bound before it decodes them.
package jsonlist

import (
	"encoding/json"
	"errors"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ErrTooLong is the error of a list of more elements than the bound.
var ErrTooLong = errors.New("more elements than the list may hold")

// Decode reads the list dec is at into *p, for an UnmarshalJSONFrom
// method of go-json-experiment/json: an element at a time, each with
// opts, refusing the one past most before it decodes it. Its steps are
// those of encoding/json's decoding of a slice: an element within the
// slice's capacity is decoded into what is there, the slice grows by
// append's rule, an empty list is an empty slice and null a nil one.
func Decode[T any](dec *jsontext.Decoder, p *[]T, most int, opts jsonv2.Options) error {
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
		if i == most {
			return ErrTooLong
		}
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
