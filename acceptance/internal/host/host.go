// Package host identifies the machine a run is recorded on, so that runs
// recorded on many hosts can be told apart and judged together.
//
// It reads the hostname, machine id, board serial, kernel release and CPU
// model from files and the kernel's uname; it never runs a command.
//
// The environment variable DRIVEQUAL_HOSTNAME, when set, replaces the
// hostname read from the machine (tests, and hosts whose hostname is not
// unique, such as containers).
package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// HostnameEnv is the environment variable that, when non-empty, replaces
// the hostname Identify reads.
const HostnameEnv = "DRIVEQUAL_HOSTNAME"

// Info is a host's identity as a run records it.
type Info struct {
	// Hostname is DRIVEQUAL_HOSTNAME, else /etc/hostname, else the
	// kernel's hostname.
	Hostname string `json:"hostname"`
	// MachineID is /etc/machine-id (systemd's per-installation id).
	MachineID string `json:"machine_id,omitempty"`
	// ProductSerial is the board's DMI product serial; the kernel lets only
	// root read it, so it is empty for other users.
	ProductSerial string `json:"product_serial,omitempty"`
	// Kernel is the kernel release (uname -r); empty off Linux.
	Kernel string `json:"kernel,omitempty"`
	// CPUModel is /proc/cpuinfo's first "model name".
	CPUModel string `json:"cpu_model,omitempty"`
	// FioVersion and NvmeVersion are the versions of fio and nvme-cli the
	// run used ("fio-3.36", "nvme version 2.8"); Identify leaves them
	// empty for the caller, which runs those tools, to fill.
	FioVersion  string `json:"fio_version,omitempty"`
	NvmeVersion string `json:"nvme_version,omitempty"`
}

// Name is how the host is named in messages: its hostname, else its
// machine id, else "".
func (i Info) Name() string {
	if i.Hostname != "" {
		return i.Hostname
	}
	return i.MachineID
}

// Identify reads this machine's identity. A field it cannot read is left
// empty; it never fails. ctx is for the caller's deadline; Identify
// reads only local files.
func Identify(ctx context.Context) Info {
	_ = ctx
	return identify(source{
		root:     "/",
		getenv:   os.Getenv,
		hostname: os.Hostname,
		kernel:   kernelRelease,
	})
}

// source is where identify reads from; tests give a fake root.
type source struct {
	root     string                 // the file system's root
	getenv   func(string) string    // the environment
	hostname func() (string, error) // the kernel's hostname
	kernel   func() string          // the kernel release
}

func identify(s source) Info {
	return Info{
		Hostname:      hostname(s),
		MachineID:     firstOf(s.root, "etc/machine-id", "var/lib/dbus/machine-id"),
		ProductSerial: firstOf(s.root, "sys/class/dmi/id/product_serial"),
		Kernel:        s.kernel(),
		CPUModel:      cpuModel(s.root),
	}
}

// hostname is the override, else /etc/hostname, else the kernel's.
func hostname(s source) string {
	if h := strings.TrimSpace(s.getenv(HostnameEnv)); h != "" {
		return h
	}
	if h := firstOf(s.root, "etc/hostname"); h != "" {
		return h
	}
	if h, err := s.hostname(); err == nil {
		return strings.TrimSpace(h)
	}
	return ""
}

// firstOf returns the first non-empty line of the first readable file of
// names under root, trimmed; "" when none is.
func firstOf(root string, names ...string) string {
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			if v := strings.TrimSpace(line); v != "" && !strings.HasPrefix(v, "#") {
				return v
			}
		}
	}
	return ""
}

// cpuModel is the value of the first "model name" line of /proc/cpuinfo.
func cpuModel(root string) string {
	data, err := os.ReadFile(filepath.Join(root, "proc/cpuinfo"))
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		key, val, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(val)
		}
	}
	return ""
}
