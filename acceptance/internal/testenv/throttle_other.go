//go:build !linux

package testenv

// cgroupMounts finds no cgroup hierarchy: cgroups are Linux's, and
// WriteThrottle skips its test elsewhere.
func cgroupMounts() (v1blkio, v2 string) { return "", "" }
