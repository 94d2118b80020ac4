//go:build !unix

package qual

const (
	noFollow = 0
	nonBlock = 0
)
