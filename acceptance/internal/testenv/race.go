//go:build race

package testenv

// Race is true when the test binary was built with -race.
const Race = true
