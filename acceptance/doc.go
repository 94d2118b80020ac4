// Package acceptance is drivequal's qualification suite, whose tests are
// the verdicts on the drives given or on a recording replayed.
//
// TestSingleDrive/<capacity>/<workload> judges one drive against the
// spec's cell, TestScaling/<N>_drives/<workload> judges N drives against
// N × one. With no flags it replays the spec's recorded outputs.
//
//	go test ./acceptance -count=1 -timeout=12h -args -drives=/dev/nvme0n1 -destructive
//
// An inconclusive cell (measured without full preconditioning, or with fio
// job errors, yet meeting its spec) is reported as a skipped test whose
// message starts with "INCONCLUSIVE", and as "inconclusive" in results.json
// and summary.md.
package acceptance
