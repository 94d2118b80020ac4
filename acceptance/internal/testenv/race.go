//go:build race

package testenv

// race is true when the test binary was built with -race.
const race = true
