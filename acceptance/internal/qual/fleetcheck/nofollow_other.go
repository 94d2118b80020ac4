//go:build !unix

package fleetcheck

const (
	noFollow = 0
	nonBlock = 0
)
