package live

import "github.com/drivequal/drivequal/acceptance/internal/device"

// Guard keeps the run's targets to itself while it runs: it holds each
// exclusively, discards through that hold and says whether a target is
// still the one set up.
type Guard interface {
	// Recheck fails, saying what changed, when the target is no longer
	// the one described by info.
	Recheck(info device.Info) error
	// Discard deallocates the whole target through the held descriptor.
	Discard(path string) error
	// Close lets the targets go.
	Close() error
}

// DriveChangedError says a drive is no longer the one set up: another
// device number, serial or size behind its path. Its remaining cells fail.
type DriveChangedError struct{ Err error }

func (e *DriveChangedError) Error() string { return e.Err.Error() }
func (e *DriveChangedError) Unwrap() error { return e.Err }

// held is the Guard of a live run: the drives held by device.System.Hold.
type held struct {
	sys   device.System
	holds *device.Holds
}

func (h held) Recheck(info device.Info) error { return h.sys.Recheck(info) }
func (h held) Discard(path string) error      { return h.holds.Discard(path) }
func (h held) Close() error                   { return h.holds.Close() }

// Hold is the Guard of drives held by device.System.Hold.
func Hold(sys device.System, holds *device.Holds) Guard { return held{sys: sys, holds: holds} }
