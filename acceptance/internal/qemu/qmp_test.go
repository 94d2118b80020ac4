package qemu

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestArgsQMPAndExtra(t *testing.T) {
	m := Machine{QMP: "/w/qmp.sock", Extra: []string{"-device", "x"}}
	args, err := m.Args(Kernel{Image: "/boot/vmlinuz"}, "/w/initrd", "/w", "tcg")
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(args, "-qmp"); i < 0 || args[i+1] != "unix:/w/qmp.sock,server=on,wait=off" {
		t.Errorf("args %q: want -qmp unix:/w/qmp.sock,server=on,wait=off", args)
	}
	if !slices.Equal(args[len(args)-2:], []string{"-device", "x"}) {
		t.Errorf("args %q: want the Extra arguments last", args)
	}
	m.QMP = "/w/a,b"
	if _, err := m.Args(Kernel{}, "/w/initrd", "/w", "tcg"); err == nil || !strings.Contains(err.Error(), "/w/a,b") {
		t.Errorf("a QMP path with a comma: err %v, want one naming it", err)
	}
}

// TestQMP talks to a server that speaks QMP as QEMU 7.2 does (greeting,
// an event between a command and its reply, errors with class and desc).
func TestQMP(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "qmp.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var got []string
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(c)
			c.Write([]byte(`{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}}, "capabilities": ["oob"]}}` + "\n"))
			for {
				line, err := r.ReadBytes('\n')
				if err != nil {
					break
				}
				var req struct {
					Execute   string          `json:"execute"`
					Arguments json.RawMessage `json:"arguments"`
				}
				json.Unmarshal(line, &req)
				mu.Lock()
				got = append(got, req.Execute+" "+string(req.Arguments))
				mu.Unlock()
				switch req.Execute {
				case "qmp_capabilities":
					c.Write([]byte(`{"return": {}}` + "\n"))
				case "device_del":
					c.Write([]byte(`{"timestamp": {"seconds": 1, "microseconds": 2}, "event": "DEVICE_DELETED", "data": {"path": "/machine/peripheral/b"}}` + "\n"))
					c.Write([]byte(`{"return": {}}` + "\n"))
				default:
					c.Write([]byte(`{"error": {"class": "CommandNotFound", "desc": "The command ` + req.Execute + ` has not been found"}}` + "\n"))
				}
			}
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ret, err := QMP(ctx, sock, "device_del", map[string]string{"id": "b"})
	if err != nil || string(ret) != "{}" {
		t.Fatalf("device_del: %s, %v; want {}", ret, err)
	}
	if _, err := QMP(ctx, sock, "nope", nil); err == nil || !strings.Contains(err.Error(), "CommandNotFound: The command nope has not been found") {
		t.Errorf("an unknown command: err %v, want QEMU's class and description", err)
	}
	want := []string{"qmp_capabilities ", `device_del {"id":"b"}`, "qmp_capabilities ", "nope "}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("the server read %q, want %q", got, want)
	}
}
