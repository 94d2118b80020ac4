package docs

import (
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// Required reports whether r's default cell says the key is required
// ("required", "required in `[scaling]`").
func (r KeyRow) Required() bool {
	return strings.HasPrefix(strings.TrimSpace(r.Default), "required")
}

var literalCellRE = regexp.MustCompile("^`[^`]+`(?:, `[^`]+`)*$")

// Literal is r's default as a TOML value, when its default cell gives one:
// code spans only, one for the row or one for each of its keys, each a
// TOML value (`"30m"`, `0.20`, `[]`), before any remark after a colon
// ("`[]`: any"). A default said in words ("unset", "fio's 50", "`[method]`
// `runtime`") is none.
func (r KeyRow) Literal() (string, bool) {
	cell := strings.TrimSpace(r.Default)
	// The remark starts at the first colon outside code.
	code := false
	for i, c := range cell {
		if c == '`' {
			code = !code
		}
		if c == ':' && !code {
			cell = strings.TrimSpace(cell[:i])
			break
		}
	}
	if !literalCellRE.MatchString(cell) {
		return "", false
	}
	vals := codeSpans(cell)
	for _, v := range vals {
		var x map[string]any
		if _, err := toml.Decode("v = "+v, &x); err != nil {
			return "", false
		}
	}
	switch len(vals) {
	case 1:
		return vals[0], true
	case r.Of:
		return vals[r.Index], true
	}
	return "", false
}
