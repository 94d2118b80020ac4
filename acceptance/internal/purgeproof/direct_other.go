//go:build !linux

package purgeproof

// oDirect is 0 where the kernel has no O_DIRECT (a replay host; a live run
// is Linux only).
const oDirect = 0
