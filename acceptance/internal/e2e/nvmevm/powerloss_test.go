package nvmevm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The powerloss boot's controllers are backed by NBD exports that
// nbdkit serves on the host, one server a controller, each a drive
// personality from one real stack (nbdkit's file plugin, and its cache
// filter in front of it or not):
//
//	DQPLP0001  protected: the file plugin alone; every write nbdkit
//	           completes is in the image file (its page cache: the host's
//	           power never goes, and a flush ends at nbdkit's fua filter,
//	           fuamode=discard, without an fdatasync of the host's disk)
//	DQVWC0001  an honest volatile cache: --filter=cache cache=writeback;
//	           writes stay in nbdkit's cache until a flush writes them
//	DQLIE0001  a lying cache: --filter=cache cache=unsafe; flushes are
//	           completed and ignored
//
// A power cut (a guest's {"cut": SERIAL} request) SIGKILLs that drive's
// nbdkit, so that what its cache held is lost, and removes its controller
// over QMP (device_del); a restore starts nbdkit again on the same image
// and adds the controller back (device_add) with the same serial. Each
// server also logs every request it receives (nbdkit's log filter, in
// front of the cache), in the work directory the guest sees:
// images/<id>.log.

// Serials of the powerloss boot's controllers.
const (
	serialPLP  = "DQPLP0001"
	serialVWC  = "DQVWC0001"
	serialLiar = "DQLIE0001"
	plBytes    = 32 << 20
)

// nbdDrive is a controller of the powerloss boot and its nbdkit.
type nbdDrive struct {
	id, serial string
	// cache is the cache filter's mode ("" for no cache filter).
	cache string
}

var nbdDrives = []nbdDrive{
	{id: "plp", serial: serialPLP},
	{id: "vwc", serial: serialVWC, cache: "writeback"},
	{id: "liar", serial: serialLiar, cache: "unsafe"},
}

func init() {
	configs = append(configs, config{
		name:    "powerloss",
		optIn:   envPower,
		machine: powerMachine,
		power:   startNBD,
		tests:   []string{"TestGuestPowerLossProtected", "TestGuestPowerLossVolatile"},
		timeout: 15 * time.Minute,
	})
}

func (d nbdDrive) image(images string) string  { return filepath.Join(images, d.id+".raw") }
func (d nbdDrive) socket(images string) string { return filepath.Join(images, d.id+".sock") }
func (d nbdDrive) log(images string) string    { return filepath.Join(images, d.id+".log") }

// node is the block node of d's generation gen (0 at boot, one more at
// each restore): a node whose server was killed is not reused.
func (d nbdDrive) node(gen int) string { return fmt.Sprintf("%s-nbd%d", d.id, gen) }

// powerMachine is the guest of the powerloss boot: one controller a
// personality, each with one namespace (the controller's drive=, the
// legacy namespace 1, which QEMU gives no UUID that would change at each
// device_add), its write cache on so that the guest's flushes, not a
// FUA on every write, decide what reaches nbdkit.
func powerMachine(images string) qemu.Machine { return powerMachineOf(images, nbdDrives) }

// powerMachineOf is powerMachine with the controllers of drives.
func powerMachineOf(images string, drives []nbdDrive) qemu.Machine {
	m := qemu.Machine{Memory: 1024, CPUs: 2, SingleThreadTCG: true, Udev: true}
	for _, d := range drives {
		m.Extra = append(m.Extra,
			"-blockdev", "driver=nbd,node-name="+d.node(0)+",server.type=unix,server.path="+d.socket(images),
			"-device", "nvme,id="+d.id+",serial="+d.serial+",drive="+d.node(0)+",write-cache=on")
	}
	return m
}

// powerRequest is a guest's request to cut or restore the power of the
// controller with the serial given, or ({"cut_host": true}) to cut the
// power of its whole host: QEMU and every nbdkit of the boot.
type powerRequest struct {
	Cut     string `json:"cut,omitempty"`
	Restore string `json:"restore,omitempty"`
	CutHost bool   `json:"cut_host,omitempty"`
}

func (p powerRequest) String() string {
	switch {
	case p.CutHost:
		return "cut the host"
	case p.Cut != "":
		return "cut " + p.Cut
	}
	return "restore " + p.Restore
}

// powerFunc serves a power request.
type powerFunc func(ctx context.Context, req powerRequest) error

func servePower(ctx context.Context, power powerFunc, req powerRequest) error {
	if power == nil {
		return errors.New("this boot's controllers have no power the host cuts: no configuration's power serves " + req.String())
	}
	return power(ctx, req)
}

// nbdServers are the powerloss boot's nbdkit servers.
type nbdServers struct {
	t          *testing.T
	bin        string
	images     string
	qmp        string
	work       string // the boot's work directory (hostCutFile, its images/qemu.pid)
	drives     []nbdDrive
	delay      string // each write's delay (nbdkit's delay filter), "" for none
	hostCut    bool   // the whole host's power was cut
	mu         sync.Mutex
	running    map[string]*exec.Cmd     // by serial; nil once cut
	done       map[string]chan struct{} // closed when its server exited
	generation map[string]int
}

// writeDelay is how long each nbdkit of the power-cut boots holds each
// write (nbdkit's delay filter, in front of the log and the cache): with
// one write in flight a job, a job completes at most 500 writes a second,
// so fio's 24 MiB (6144 writes) lasts at least 6 s however fast the guest
// runs, and a cut that is slow to come still finds fio writing. Without
// it the two jobs had completed 1,500-3,600 writes by the cut alone,
// 1,100-2,300 beside three busy loops, and beside the rest of make test
// completed about 300 a second.
const writeDelay = "2ms"

// startNBD creates each drive's image and starts its nbdkit before the
// guest boots (QEMU connects at start), each write held writeDelay;
// they are killed when t ends.
func startNBD(t *testing.T, work, qmp string) powerFunc {
	return startNBDOn(t, work, filepath.Join(work, "images"), qmp, nbdDrives, false, writeDelay)
}

// startNBDOn starts each drive's nbdkit on its image in images, each
// created empty unless keep (a reboot's drives, on the images the boot
// before left), each write held delay ("" for none).
func startNBDOn(t *testing.T, work, images, qmp string, drives []nbdDrive, keep bool, delay string) powerFunc {
	bin := testenv.MustHave(t, "nbdkit", "nbdkit")
	s := &nbdServers{t: t, bin: bin, images: images, qmp: qmp, work: work, drives: drives, delay: delay,
		running: map[string]*exec.Cmd{}, done: map[string]chan struct{}{}, generation: map[string]int{}}
	if err := os.MkdirAll(s.images, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	for _, d := range s.drives {
		if keep {
			if st, err := os.Stat(d.image(s.images)); err != nil || st.Size() != plBytes {
				t.Fatalf("%s's image from the boot before: %v (want %d bytes)", d.serial, err, plBytes)
			}
		} else {
			if err := os.WriteFile(d.image(s.images), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(d.image(s.images), plBytes); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.start(d); err != nil {
			t.Fatal(err)
		}
	}
	return s.serve
}

// start starts d's nbdkit and waits until its socket accepts.
func (s *nbdServers) start(d nbdDrive) error {
	sock := d.socket(s.images)
	os.Remove(sock)
	args := []string{"-f", "-U", sock}
	if s.delay != "" {
		args = append(args, "--filter=delay")
	}
	args = append(args, "--filter=log")
	if d.cache != "" {
		args = append(args, "--filter=cache")
	}
	// A flush ends at the cache (written back to the image's page cache,
	// which outlives nbdkit's SIGKILL: the host keeps its power): no
	// fdatasync of the host's disk. Beside the rest of make test that
	// fdatasync took longer than the 16 writes between two flushes, so
	// fio's runtime mostly ran out during a flush, and both jobs of the
	// honest cache ended with every write flushed (368 writes, 23 flushes
	// of 16): nothing unflushed to lose at the host's cut.
	args = append(args, "--filter=fua", "file", "file="+d.image(s.images), "fuamode=discard", "logfile="+d.log(s.images), "logappend=true")
	if d.cache != "" {
		args = append(args, "cache="+d.cache)
	}
	if s.delay != "" {
		args = append(args, "delay-write="+s.delay)
	}
	cmd := exec.Command(s.bin, args...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting nbdkit for %s: %w", d.serial, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.running[d.serial], s.done[d.serial] = cmd, done
	s.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("nbdkit %s exited before serving %s: %s", strings.Join(args, " "), sock, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nbdkit %s: %s does not accept after 20 s", strings.Join(args, " "), sock)
		}
	}
}

func (s *nbdServers) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for serial, cmd := range s.running {
		if cmd != nil {
			cmd.Process.Kill()
			<-s.done[serial]
		}
	}
}

func (s *nbdServers) drive(serial string) (nbdDrive, error) {
	for _, d := range s.drives {
		if d.serial == serial {
			return d, nil
		}
	}
	return nbdDrive{}, fmt.Errorf("no controller of this boot has serial %q", serial)
}

func (s *nbdServers) serve(ctx context.Context, req powerRequest) error {
	if req.CutHost {
		return s.cutHost()
	}
	if req.Cut != "" {
		return s.cut(ctx, req.Cut)
	}
	return s.restore(ctx, req.Restore)
}

// cut kills the drive's nbdkit (its cache is lost with it; QEMU's NBD
// client fails the I/O in flight and after) and then removes its
// controller, returning once QEMU no longer has it. The guest's driver
// shuts the controller down as it is removed, and QEMU flushes the
// namespace then: to a server that is gone.
func (s *nbdServers) cut(ctx context.Context, serial string) error {
	d, err := s.drive(serial)
	if err != nil {
		return err
	}
	s.mu.Lock()
	cmd, done := s.running[serial], s.done[serial]
	s.running[serial] = nil
	s.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("%s is cut already", serial)
	}
	if err := cmd.Process.Kill(); err != nil {
		return fmt.Errorf("killing %s's nbdkit: %w", serial, err)
	}
	<-done
	s.t.Logf("host: %s's nbdkit killed: %s", serial, serverLog(d.log(s.images)))
	if _, err := s.qmpCall(ctx, "device_del", map[string]any{"id": d.id}); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ret, err := s.qmpCall(ctx, "qom-list", map[string]any{"path": "/machine/peripheral"})
		if err != nil {
			return err
		}
		var props []struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(ret, &props); err != nil {
			return fmt.Errorf("qom-list /machine/peripheral: %s: %w", ret, err)
		}
		gone := true
		for _, p := range props {
			gone = gone && p.Name != d.id
		}
		if gone {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("controller %s (%s) still in QEMU 2 minutes after device_del: the guest did not release it", d.id, serial)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The old node's server is gone; a restore adds a new node.
	s.mu.Lock()
	gen := s.generation[serial]
	s.mu.Unlock()
	// QEMU lets the node go once the device is finalized, shortly after.
	for try := 0; ; try++ {
		_, err := s.qmpCall(ctx, "blockdev-del", map[string]any{"node-name": d.node(gen)})
		if err == nil {
			break
		}
		if try == 20 {
			s.t.Logf("host: blockdev-del %s: %v (left to QEMU)", d.node(gen), err)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// hostCutFile, in a boot's work directory, says that the host cut the
// guest's power at its request (the time it did): the boot then ends
// without the guest's exit file, as expected, and its reboot judges it.
const hostCutFile = "host-cut"

// qemuPidFile is where the powerloss boots' QEMU writes its pid
// (-pidfile), under the boot's work directory.
func qemuPidFile(work string) string { return filepath.Join(work, "images", "qemu.pid") }

// hostCutAt is when the host cut the power of the guest booted in work
// ("" when it did not).
func hostCutAt(work string) string {
	b, err := os.ReadFile(filepath.Join(work, hostCutFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// cutHost cuts the whole host's power: it SIGKILLs every nbdkit of the
// boot (what their caches held is lost, as a drive's volatile cache is
// when the power goes) and then QEMU (the guest stops where it is: no
// shutdown, no flush), having first noted the cut in the work
// directory (hostCutFile) so that the boot's end is taken for the cut.
func (s *nbdServers) cutHost() error {
	s.mu.Lock()
	cut := s.hostCut
	s.mu.Unlock()
	if cut {
		return errors.New("the host's power is cut already")
	}
	pid, err := qemuPid(qemuPidFile(s.work))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.work, hostCutFile), []byte(time.Now().UTC().Format("15:04:05.000")+"\n"), 0o644); err != nil {
		return err
	}
	s.mu.Lock()
	s.hostCut = true
	var lost []string
	for _, d := range s.drives {
		cmd, done := s.running[d.serial], s.done[d.serial]
		if cmd == nil {
			continue
		}
		s.running[d.serial] = nil
		cmd.Process.Kill()
		<-done
		lost = append(lost, d.serial+": "+serverLog(d.log(s.images)))
	}
	s.mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing QEMU (pid %d): %w", pid, err)
	}
	// No reply is written before the guest is gone: a reply it read would
	// let it run on after its cut.
	for deadline := time.Now().Add(10 * time.Second); running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("QEMU (pid %d) still runs 10 s after SIGKILL", pid)
		}
	}
	s.t.Logf("host: the whole host's power cut: QEMU (pid %d) and every nbdkit killed; %s", pid, strings.Join(lost, "; "))
	return nil
}

// running reports whether process pid runs (it is neither gone nor a
// zombie).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// qemuPid reads QEMU's pid from its -pidfile and checks that the process
// is QEMU's.
func qemuPid(pidfile string) (int, error) {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return 0, fmt.Errorf("the host's power cannot be cut: QEMU's pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s: %q is no pid", pidfile, b)
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil || !strings.HasPrefix(string(comm), "qemu") {
		return 0, fmt.Errorf("%s: pid %d is not QEMU (%q, %v)", pidfile, pid, strings.TrimSpace(string(comm)), err)
	}
	return pid, nil
}

// restore starts the drive's nbdkit again, on the same image with an
// empty cache, and adds its controller back with the same serial.
func (s *nbdServers) restore(ctx context.Context, serial string) error {
	d, err := s.drive(serial)
	if err != nil {
		return err
	}
	s.mu.Lock()
	up := s.running[serial] != nil
	s.generation[serial]++
	gen := s.generation[serial]
	s.mu.Unlock()
	if up {
		return fmt.Errorf("%s was not cut", serial)
	}
	if err := s.start(d); err != nil {
		return err
	}
	if _, err := s.qmpCall(ctx, "blockdev-add", map[string]any{"driver": "nbd", "node-name": d.node(gen),
		"server": map[string]any{"type": "unix", "path": d.socket(s.images)}}); err != nil {
		return err
	}
	_, err = s.qmpCall(ctx, "device_add", map[string]any{"driver": "nvme", "id": d.id, "serial": d.serial, "drive": d.node(gen), "write-cache": "on"})
	return err
}

func (s *nbdServers) qmpCall(ctx context.Context, command string, args any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return qemu.QMP(ctx, s.qmp, command, args)
}

// serverLog summarizes what the server whose log filter wrote logPath
// received since it last started: its writes (with FUA or not) and
// flushes, and the writes that came after its last flush.
func serverLog(logPath string) string {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return err.Error()
	}
	text := string(b)
	if i := strings.LastIndex(text, " Ready "); i >= 0 {
		text = text[i:]
	}
	var writes, fua, flushes, after int
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.Contains(line, " Write id=") && !strings.Contains(line, "...Write"):
			writes++
			after++
			if strings.Contains(line, " fua=1") {
				fua++
			}
		case strings.Contains(line, " Flush id=") && !strings.Contains(line, "...Flush"):
			flushes++
			after = 0
		}
	}
	return fmt.Sprintf("%d writes (%d FUA), %d flushes, %d writes after the last flush", writes, fua, flushes, after)
}
