package nvmevm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
)

// A guest test changes its own machine (device_del of a controller,
// qom-set of a property) through QEMU's QMP monitor, which only the host
// reaches: it writes the command to the work directory's requests/
// directory as NAME.json, {"execute": ..., "arguments": ...}, and the host
// (serveRequests) sends it and writes QEMU's reply beside it as
// NAME.reply, {"return": ...} or {"error": "..."}.

// qmpRequest is a command a guest test asks the host to send, or a
// power request ({"cut": SERIAL} or {"restore": SERIAL}) its
// configuration's power serves (see powerloss_test.go).
type qmpRequest struct {
	Execute   string          `json:"execute"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	powerRequest
}

// qmpAnswer is the host's reply file.
type qmpAnswer struct {
	Return json.RawMessage `json:"return,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// serveRequests sends the guest's QMP requests under work/requests to the
// socket until ctx is done, logging each on t; the channel closes when it
// has stopped (before t ends, so that nothing logs after it).
func serveRequests(ctx context.Context, t *testing.T, work, socket string, power powerFunc) <-chan struct{} {
	dir := filepath.Join(work, "requests")
	done := make(chan struct{})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Error(err)
		close(done)
		return done
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			reqs, _ := filepath.Glob(filepath.Join(dir, "*.json"))
			for _, p := range reqs {
				reply := strings.TrimSuffix(p, ".json") + ".reply"
				if _, err := os.Stat(reply); err == nil {
					continue
				}
				var req qmpRequest
				var ans qmpAnswer
				data, err := os.ReadFile(p)
				if err == nil {
					err = json.Unmarshal(data, &req)
				}
				what := fmt.Sprintf("QMP %s %s", req.Execute, req.Arguments)
				switch {
				case err == nil && req.powerRequest != (powerRequest{}):
					what = "power " + req.powerRequest.String()
					if err = servePower(ctx, power, req.powerRequest); err == nil {
						ans.Return = json.RawMessage("{}")
					}
				case err == nil:
					var args any
					if len(req.Arguments) > 0 {
						args = req.Arguments
					}
					qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					ans.Return, err = qemu.QMP(qctx, socket, req.Execute, args)
					cancel()
				}
				if err != nil {
					ans.Error = err.Error()
				}
				t.Logf("host: %s at %s: %s", what, time.Now().UTC().Format("15:04:05.000"), orOK(ans.Error))
				out, _ := json.Marshal(ans)
				if err := os.WriteFile(reply+".tmp", out, 0o644); err == nil {
					os.Rename(reply+".tmp", reply)
				}
			}
		}
	}()
	return done
}

func orOK(s string) string {
	if s == "" {
		return "ok"
	}
	return s
}

// hostQMP, in the guest, has the host send command with args (nil: none)
// to QEMU's QMP monitor and returns QEMU's "return" value.
func hostQMP(command string, args any) (json.RawMessage, error) {
	dir := filepath.Join(os.Getenv(envWork), "requests")
	req := qmpRequest{Execute: command}
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		req.Arguments = b
	}
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	name := filepath.Join(dir, fmt.Sprintf("%d-%d", time.Now().UnixNano(), os.Getpid()))
	if err := os.WriteFile(name+".tmp", data, 0o644); err != nil {
		return nil, fmt.Errorf("asking the host for QMP %s: %w", command, err)
	}
	if err := os.Rename(name+".tmp", name+".json"); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(name + ".reply"); err == nil {
			var ans qmpAnswer
			if err := json.Unmarshal(b, &ans); err != nil {
				return nil, fmt.Errorf("QMP %s: the host's reply %q: %w", command, b, err)
			}
			if ans.Error != "" {
				return nil, errors.New(ans.Error)
			}
			return ans.Return, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("QMP %s: the host did not answer in a minute", command)
}

// TestGuestQMP: a guest test reaches its own QEMU's monitor through the
// host (hostQMP), as the tests that change the machine mid-run do.
func TestGuestQMP(t *testing.T) {
	guest(t)
	ret, err := hostQMP("query-status", nil)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Running bool   `json:"running"`
		Status  string `json:"status"`
	}
	if err := json.Unmarshal(ret, &st); err != nil || !st.Running || st.Status != "running" {
		t.Errorf("query-status returned %s (%v), want the running guest", ret, err)
	}
	if _, err := hostQMP("no-such-command", nil); err == nil || !strings.Contains(err.Error(), "CommandNotFound") {
		t.Errorf("an unknown command: err %v, want QEMU's CommandNotFound", err)
	}
}
