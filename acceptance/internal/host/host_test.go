package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// identifyTest is one fake machine: the files under its root, its
// environment and its kernel's hostname.
type identifyTest struct {
	name     string
	files    map[string]string // path under the root → content
	env      map[string]string
	hostname string // the kernel's; "" makes os.Hostname fail
	want     Info
}

const cpuinfo = `processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Gold 6430
flags		: fpu vme

processor	: 1
model name	: Intel(R) Xeon(R) Gold 6430
`

var identifyTests = []identifyTest{
	{
		name: "root",
		files: map[string]string{
			"etc/hostname":                    "# set by the installer\nstor-a01\n",
			"etc/machine-id":                  "0123456789abcdef0123456789abcdef\n",
			"sys/class/dmi/id/product_serial": "SN-123\n",
			"proc/cpuinfo":                    cpuinfo,
		},
		hostname: "kernel-name",
		want: Info{Hostname: "stor-a01", MachineID: "0123456789abcdef0123456789abcdef",
			ProductSerial: "SN-123", Kernel: "6.1.0-test", CPUModel: "Intel(R) Xeon(R) Gold 6430"},
	},
	{
		name: "override",
		files: map[string]string{
			"etc/hostname":   "stor-a01\n",
			"etc/machine-id": "0123456789abcdef0123456789abcdef\n",
		},
		env:      map[string]string{HostnameEnv: " fleet-07 \n"},
		hostname: "kernel-name",
		want:     Info{Hostname: "fleet-07", MachineID: "0123456789abcdef0123456789abcdef", Kernel: "6.1.0-test"},
	},
	{
		// No /etc/hostname (a minimal container): the kernel's hostname;
		// the D-Bus machine id; no cpuinfo "model name" (arm64).
		name: "fallbacks",
		files: map[string]string{
			"var/lib/dbus/machine-id": "fedcba9876543210fedcba9876543210\n",
			"proc/cpuinfo":            "processor\t: 0\nCPU implementer\t: 0x41\n",
		},
		hostname: "kernel-name\n",
		want:     Info{Hostname: "kernel-name", MachineID: "fedcba9876543210fedcba9876543210", Kernel: "6.1.0-test"},
	},
	{
		name: "nothing readable",
		want: Info{Kernel: "6.1.0-test"},
	},
}

func TestIdentify(t *testing.T) {
	for _, tt := range identifyTests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tt.files {
				path := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := identify(source{
				root:   root,
				getenv: func(k string) string { return tt.env[k] },
				hostname: func() (string, error) {
					if tt.hostname == "" {
						return "", errors.New("no hostname")
					}
					return tt.hostname, nil
				},
				kernel: func() string { return "6.1.0-test" },
			})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("identify(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestProductSerialUnreadable: the kernel makes product_serial readable
// by root only; for anyone else the field is empty, not an error.
func TestProductSerialUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a file whatever its mode; this checks a non-root read")
	}
	root := t.TempDir()
	path := filepath.Join(root, "sys/class/dmi/id/product_serial")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("SN-123\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	if got := firstOf(root, "sys/class/dmi/id/product_serial"); got != "" {
		t.Errorf("firstOf(unreadable product_serial) = %q, want \"\"", got)
	}
}

// TestIdentifyHere reads this machine: the override is honoured, and on
// Linux the kernel release is known.
func TestIdentifyHere(t *testing.T) {
	t.Setenv(HostnameEnv, "fleet-test")
	got := Identify(context.Background())
	if got.Hostname != "fleet-test" {
		t.Errorf("Identify().Hostname = %q with %s=fleet-test, want fleet-test", got.Hostname, HostnameEnv)
	}
	if runtime.GOOS == "linux" && got.Kernel == "" {
		t.Error("Identify().Kernel = \"\" on Linux, want uname's release")
	}
	if got.FioVersion != "" || got.NvmeVersion != "" {
		t.Errorf("Identify() filled tool versions %q, %q; the caller fills them", got.FioVersion, got.NvmeVersion)
	}
}

type nameTest struct {
	in   Info
	want string
}

var nameTests = []nameTest{
	{Info{Hostname: "a", MachineID: "m"}, "a"},
	{Info{MachineID: "m"}, "m"},
	{Info{}, ""},
}

func TestName(t *testing.T) {
	for _, tt := range nameTests {
		if got := tt.in.Name(); got != tt.want {
			t.Errorf("%+v.Name() = %q, want %q", tt.in, got, tt.want)
		}
	}
}
