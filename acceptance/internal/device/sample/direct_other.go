//go:build !linux

package sample

// oDirect is 0 where the kernel has no O_DIRECT: the sample is read
// through the cache (a replay host; a live run is Linux only).
const oDirect = 0
