package nvmevm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
)

// A guest test changes its own machine (device_del of a controller,
// qom-set of a property) through QEMU's QMP monitor, which only the host
// reaches: it writes the command to the work directory's requests/
// directory as NAME.json, {"execute": ..., "arguments": ...}, and the host
// (serveRequests) sends it and writes QEMU's reply beside it as
// NAME.reply, {"return": ...} or {"error": "..."}. A request may hold a
// second command, "then": {"after_ms": N, "execute": ..., "arguments":
// ...}, which the host sends N ms after the first returned (unless it
// failed), timed on the host so that a guest under TCG does not stretch
// the interval; the reply, written once both are done, is the second's.
// The host serves the requests one at a time, so the others wait meanwhile.

// qmpRequest is a command a guest test asks the host to send, or a
// power request ({"cut": SERIAL} or {"restore": SERIAL}) its
// configuration's power serves (see powerloss_test.go).
type qmpRequest struct {
	Execute   string          `json:"execute"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Then      *qmpThen        `json:"then,omitempty"`
	powerRequest
}

// qmpThen is the command the host sends AfterMS after a request's own.
type qmpThen struct {
	AfterMS   int             `json:"after_ms"`
	Execute   string          `json:"execute"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
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
					ans.Return, err = sendQMP(ctx, socket, req.Execute, req.Arguments)
				}
				if err != nil {
					ans.Error = err.Error()
				}
				t.Logf("host: %s at %s: %s", what, time.Now().UTC().Format("15:04:05.000"), orOK(ans.Error))
				if then := req.Then; then != nil && err == nil {
					select {
					case <-ctx.Done():
					case <-time.After(time.Duration(then.AfterMS) * time.Millisecond):
					}
					ans.Return, err = sendQMP(ctx, socket, then.Execute, then.Arguments)
					if err != nil {
						ans.Error = err.Error()
					}
					t.Logf("host: QMP %s %s, %d ms after, at %s: %s", then.Execute, then.Arguments, then.AfterMS, time.Now().UTC().Format("15:04:05.000"), orOK(ans.Error))
				}
				out, _ := json.Marshal(ans)
				if err := os.WriteFile(reply+".tmp", out, 0o644); err == nil {
					os.Rename(reply+".tmp", reply)
				}
			}
		}
	}()
	return done
}

// sendQMP sends command with args (none when empty) to the socket.
func sendQMP(ctx context.Context, socket, command string, args json.RawMessage) (json.RawMessage, error) {
	var a any
	if len(args) > 0 {
		a = args
	}
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return qemu.QMP(qctx, socket, command, a)
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

// A request's "then" is sent after_ms after its own command returned,
// timed on the host, and the reply is written once both are done: the
// second's. When the first fails, the second is not sent.
func TestServeRequestsThen(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "qmp.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type sent struct {
		cmd string
		at  time.Time
	}
	var mu sync.Mutex
	var got []sent
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(c)
			c.Write([]byte(`{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}}, "capabilities": []}}` + "\n"))
			for {
				line, err := r.ReadBytes('\n')
				if err != nil {
					break
				}
				var req qmpRequest
				json.Unmarshal(line, &req)
				if req.Execute != "qmp_capabilities" {
					mu.Lock()
					got = append(got, sent{req.Execute + " " + string(req.Arguments), time.Now()})
					mu.Unlock()
				}
				switch req.Execute {
				case "qmp_capabilities":
					c.Write([]byte(`{"return": {}}` + "\n"))
				case "block_set_io_throttle":
					// Its arguments back, to tell the two apart.
					c.Write([]byte(`{"return": ` + string(req.Arguments) + `}` + "\n"))
				default:
					c.Write([]byte(`{"error": {"class": "CommandNotFound", "desc": "The command ` + req.Execute + ` has not been found"}}` + "\n"))
				}
			}
			c.Close()
		}
	}()
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	served := serveRequests(ctx, t, work, sock, nil)
	defer func() { cancel(); <-served }()

	ask := func(name, req string) qmpAnswer {
		t.Helper()
		p := filepath.Join(work, "requests", name)
		if err := os.WriteFile(p+".tmp", []byte(req), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p+".tmp", p+".json"); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if b, err := os.ReadFile(p + ".reply"); err == nil {
				var ans qmpAnswer
				if err := json.Unmarshal(b, &ans); err != nil {
					t.Fatalf("reply %q: %v", b, err)
				}
				return ans
			}
		}
		t.Fatalf("no reply to %s", name)
		return qmpAnswer{}
	}
	ans := ask("held", `{"execute": "block_set_io_throttle", "arguments": {"bps":1}, "then": {"after_ms": 300, "execute": "block_set_io_throttle", "arguments": {"bps":0}}}`)
	mu.Lock()
	held := slices.Clone(got)
	got = nil
	mu.Unlock()
	if ans.Error != "" || string(ans.Return) != `{"bps":0}` {
		t.Errorf("reply %s %q, want the second command's return, {\"bps\":0}", ans.Return, ans.Error)
	}
	if len(held) != 2 || held[0].cmd != `block_set_io_throttle {"bps":1}` || held[1].cmd != `block_set_io_throttle {"bps":0}` {
		t.Fatalf("sent %v, want the command and then its second", held)
	}
	if d := held[1].at.Sub(held[0].at); d < 300*time.Millisecond {
		t.Errorf("the second command came %s after the first, want at least after_ms, 300 ms", d)
	}

	ans = ask("failed", `{"execute": "no-such-command", "then": {"after_ms": 10, "execute": "block_set_io_throttle", "arguments": {"bps":0}}}`)
	if !strings.Contains(ans.Error, "CommandNotFound") {
		t.Errorf("reply %+v, want the first command's error", ans)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Errorf("sent %v, want the failed command alone", got)
	}
}
