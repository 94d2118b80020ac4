// Package layout checks that the code keeps one owner per concern: no
// package past 2,500 lines, no type past 25 methods, no judging code that
// asks whether the run is live, and every package's job said in one
// sentence.
//
// It holds only its test, which parses the module's own source.
package layout
