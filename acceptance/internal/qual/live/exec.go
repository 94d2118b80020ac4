package live

import "github.com/drivequal/drivequal/acceptance/internal/qual/live/fioexec"

// Executor runs the plan's fio steps for the runner: Fio runs fio, a
// test's executor stands in for it (package fioexec).
type Executor = fioexec.Executor

// Watch follows a running fio (package fioexec).
type Watch = fioexec.Watch

// Prepared is what a preparation step leaves to judge it by (package
// fioexec).
type Prepared = fioexec.Prepared

// Fio runs fio for real and records each run (package fioexec).
type Fio = fioexec.Fio

// Slug is s as one file name: letters, digits, "-" and "." kept, every
// other character "_".
func Slug(s string) string { return fioexec.Slug(s) }
