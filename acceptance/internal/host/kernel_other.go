//go:build !linux

package host

// kernelRelease is "" off Linux: drivequal measures drives on Linux only.
func kernelRelease() string { return "" }
