// Package qual sets a qualification up and judges it: Setup turns the
// validated command line into a Run that says what the run will do.
//
// A Run is its member runs (one, or each host's of a fleet replay) and
// the runs it is compared with (-baseline). Each member is a Suite: the
// spec that judges it, its drives, its plan and the evidence its cells
// are judged from — package live measures it, package recording reads
// it back — with package verdict judging either the same way and a
// reporter writing the report as results come.
package qual
