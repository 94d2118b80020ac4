# drivequal: qualify NVMe SSDs against their vendor's published figures.
#
#   make demo                      replay the D7-PS1010 brief and print its tables
#   make test                      every test, the loop-device ones too (as root)
#   make plan DRIVES=/dev/nvme0n1  what a qualification would do; writes nothing
#   make qualify DRIVES=/dev/nvme0n1,/dev/nvme1n1 [CAPACITY=1.92TB] [SPEC=...]
#                                  a real run: DESTROYS everything on DRIVES
#   make junit                     replay the brief; the suite writes report/junit.xml
#   make junit-check [JUNIT=FILE]  what GitHub's JUnit action shows for a junit.xml
#   make lint                      gofmt, go vet (Linux and macOS), the macOS build, actionlint
#   make fuzz [FUZZTIME=15s]       the fio-output, fio-decoder and spec fuzzers, each for FUZZTIME
#   make bench                     parser, report and fleet benchmarks; the harness's cost around fio
#   make bench-plan [BASE=commit]  wall time of a loop run, an older planner vs this one (root)
#   make deps                      install what the tests drive, when missing (root, apt)

GO       ?= go
SPEC     ?= solidigm-d7-ps1010
DRIVES   ?=
CAPACITY ?=
TIMEOUT  ?= 48h
REPORT   ?= report
FUZZTIME ?= 15s
GOTESTSUM = $(GO) tool gotestsum
# Every go command here builds with -trimpath, so that what it compiles
# does not depend on where the checkout is: without it the build cache is
# keyed by each package's directory, and a clean clone elsewhere (CI's)
# compiles every package of the module again in each mode, though the
# cache holds them. Measured on 2 cores, in a second clone, the modules
# already built: vetting for Linux and macOS, the macOS build, and every
# test binary built with and without -race took 290 CPU-seconds, 127
# with -trimpath, 118 in the clone that warmed the cache (go test links
# every test binary again). Panics and race reports name files by their
# module path (github.com/drivequal/drivequal/...).
# The flags go env gives (the environment's, or those go env -w saved,
# which an exported GOFLAGS would otherwise hide) follow it.
export GOFLAGS := -trimpath $(shell $(GO) env GOFLAGS)

# DRIVES is quoted: a glob (/dev/disk/by-id/nvme-MODEL_*) is the suite's to
# expand, one path per distinct drive.
QUALIFY_ARGS = -spec=$(SPEC) -drives='$(DRIVES)' -report=$(abspath $(REPORT)) $(if $(CAPACITY),-capacity=$(CAPACITY))

.PHONY: test demo plan qualify junit junit-check lint fuzz bench bench-plan deps

# deps installs what the tests drive when it is missing: fio, the
# mount, util-linux, fdisk and e2fsprogs tools the loop-device tests use (Debian
# ships losetup in mount, flock and blkdiscard in util-linux), nvme-cli
# for drive identity and purges, xmllint (libxml2-utils), which checks
# the suite's junit.xml against the Jenkins xunit and Surefire schemas,
# Chromium, headless, which opens index.html as a reader would,
# and QEMU with Debian's kernel and a static busybox, which boot the guest
# whose emulated NVMe controllers acceptance/internal/e2e/nvmevm tests on
# (the initramfs is built from them at test time), nbdkit, whose NBD
# exports back the controllers its power-loss boot cuts, and xz, which
# unpacks the kernel for the guest to boot.
deps:
	@missing=; \
	for c in fio:fio losetup:mount flock:util-linux blkdiscard:util-linux sfdisk:fdisk mkfs.ext4:e2fsprogs nvme:nvme-cli xmllint:libxml2-utils chromium:chromium qemu-system-x86_64:qemu-system-x86 nbdkit:nbdkit xz:xz-utils; do \
	  command -v $${c%%:*} >/dev/null 2>&1 || missing="$$missing $${c#*:}"; \
	done; \
	ls /boot/vmlinuz-* >/dev/null 2>&1 || missing="$$missing linux-image-amd64"; \
	dpkg-query -W -f='$${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing="$$missing busybox-static"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "missing:$$missing (install with: sudo apt-get install$$missing); the tests that need them will skip"; \
	  fi; \
	fi

# test runs the loop-device packages (LONG_PKGS) all at once, in a go
# test of their own: the 1-minute-round preconditioning (about 5½ min, its
# fio at nice 19), the loop-device integration tests and the 3-minute
# step, which spend most of their time waiting on fio and on timeouts.
# Beside them, the other packages run one more at a time than there are
# CPUs (TEST_P): short ones that fill in, RACE_FIRST first (below). On 2
# cores, with as many as CPUs, go test's default, the two longest, qual
# and powerloss/cycle, which mostly waits on fio, held both places for 200 s
# and the run ended 40 s after e2e (make test 576-585 s); with one more it
# ended before e2e (545 s), with two more e2e ended 40 s later (585 s).
# (Before the guests ran at nice -5, two more made make test slower: 697 s
# against 671 s.) TEST_P overrides it, e.g. where nproc sees more CPUs
# than a container's quota gives.
TEST_P ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$((n + 1)))
# The QEMU guest package (NVMEVM) runs in a go test of its own beside the
# rest, without -race: its host side mostly waits on QEMU, and its test
# binary is also what the guest runs its scenarios with, under TCG. The
# rest runs at nice 10, so that the guests have the CPUs first: a guest's
# time-based waits spin its emulated CPUs for as long as it is slowed, so
# a starved guest costs more CPU in all. Measured on 2 cores: the guests
# took 438 s and 510 CPU-s at nice, against 1,173 s and 686 CPU-s beside
# the rest at the same priority; make test's CPU fell from 1,587 to 1,384
# CPU-s.
# The guests' run is at nice GUEST_NICE where the user may raise a
# priority (root, or CAP_SYS_NICE), above the rest's 10 by more than the
# 10 that gave each of two guests about half a core beside a dozen busy
# threads of the rest (nice 10 weighs 110, nice 0 1024, nice -5 3121): the
# guests then took 363 CPU-seconds, done 315 s in, against 409-441 and
# 417 s at nice 0, and make test 564 s against 602-634 s. Elsewhere they
# run at the make's own priority, as before.
GUEST_NICE ?= -5
# RACE_FIRST start first in the -race run, which starts its packages in
# the order given: in ./...'s order qual, the longest of them, started
# 335 s in and ran 260 s, and fiojob and powerloss/cycle, which wait on
# fio and on timers, ran last, one at a time, on a machine the rest had
# left: the run ended a minute after e2e. With them first it ended 9-36 s
# after e2e (make test 615, 602, 603 and 629 s in four runs on 2 cores,
# against 634 s; runs of one tree vary by some 20 s).
RACE_FIRST = ./acceptance/internal/qual ./fiojob ./acceptance/internal/powerloss/cycle
LONG_PKGS = ./acceptance/internal/e2e/defaultround ./acceptance/internal/e2e ./acceptance/internal/e2e/longstep
NVMEVM = ./acceptance/internal/e2e/nvmevm
# The loop-device packages (LONG_PKGS) run without -race too, in a go
# test of their own: what they test runs in processes they start (the
# suite, built without -race, and fio), and the race detector's cost in
# their own test binaries (a third of e2e.test's CPU, hashing and filling
# devices) bought nothing of the suite's. The rest, the suite's own
# packages, run with -race.
# The go test runs skip their own vet (-vet=off): go vet ./... has run
# every analyzer over every package first, and go test's subset would run
# again for each package. Their test binaries are linked without DWARF
# (-ldflags=-w: a fifth of each link's CPU, some 70 links), which only a
# debugger reads; panics and race reports name functions and lines as
# before.
TEST_FLAGS = -vet=off -count=1 -ldflags=-w
# NORACE_TESTS, in NORACE_PKGS, skip themselves under -race
# (testenv.SkipUnderRace) and run in a go test of their own without it,
# where DRIVEQUAL_NORACE_RUN=1 makes a -race build of them fail rather
# than skip: each runs one goroutine over data at a real shape, where the
# race detector has nothing to find and cost several times the test's CPU
# (24 drives' 30-minute logs packed: 17 s against 2; 24 random images read
# back two ways, compared: 25 CPU-s against 3; the lot rule's
# simulations: 6.8 s against 1.2; the built-in plan resumed at five
# points on 24 drives: 17.5 s against 3.5; 24 drives' 8-hour logs
# parsed: 6.7 against 1.3; 1,500 steps of 24 drives' steady-state
# rounds simulated, twice: 5.5 against 3.1). A layout test keeps the list
# equal to the tests that skip.
NORACE_TESTS = TestSimulatedStepOfTwentyFour|TestSize24Drives30Minutes|TestParseRefusesGapBomb|TestReadBackSameAsOneAtATime|TestMonotoneInAddedDrives|TestErrorRateAtTheCoverage|TestResumeBuiltInPlan
NORACE_PKGS = ./acceptance/internal/steady ./acceptance/internal/timelog ./acceptance/internal/powerloss/cycle ./acceptance/internal/lot ./acceptance/internal/qual
test: deps
	$(GO) vet ./...
	@vmnice=; [ "$$(nice -n $(GUEST_NICE) nice 2>/dev/null)" -lt "$$(nice)" ] 2>/dev/null && vmnice="nice -n $(GUEST_NICE)"; \
	$$vmnice $(GO) test $(TEST_FLAGS) -timeout=40m $(NVMEVM) & vm=$$!; \
	nice -n 10 $(GO) test $(TEST_FLAGS) -timeout=20m -p=$(words $(LONG_PKGS)) $(LONG_PKGS) & long=$$!; \
	DRIVEQUAL_NORACE_RUN=1 nice -n 10 $(GO) test $(TEST_FLAGS) -timeout=20m -run='^($(NORACE_TESTS))$$' $(NORACE_PKGS) & norace=$$!; \
	first=$$($(GO) list $(RACE_FIRST)) && skip=$$($(GO) list $(NVMEVM) $(LONG_PKGS) $(RACE_FIRST)) && \
	  pkgs=$$($(GO) list ./... | grep -v -x -F "$$skip") || { wait; exit 2; }; \
	nice -n 10 $(GO) test $(TEST_FLAGS) -race -timeout=20m -p=$(TEST_P) $$first $$pkgs; rc=$$?; \
	wait $$norace || rc=1; wait $$long || rc=1; wait $$vm || rc=1; exit $$rc

demo:
	$(GO) test -count=1 ./acceptance -args -report=$(abspath $(REPORT))

# plan: -timeout is make qualify's, so the dry run checks the plan against
# the -timeout the run will have; -v, so that the plan reaches a file
# (make plan > plan.txt): go test keeps a passing package's output from
# a regular file, and the suite writes past it only to a terminal or pipe.
plan:
	@test -n "$(DRIVES)" || { echo "usage: make plan DRIVES=/dev/nvme0n1[,...] [CAPACITY=NAME] [SPEC=NAME|PATH]"; exit 2; }
	$(GO) test -count=1 -timeout=$(TIMEOUT) -v ./acceptance -args $(QUALIFY_ARGS) -dry-run

# qualify and junit: gotestsum shows the run in the terminal and keeps go
# test's event stream in go-test.json; the suite itself writes
# $(REPORT)/junit.xml from its judged results (one testcase per cell and
# one Verdict/<capacity> per gate), which is the file CI publishes.
qualify: deps
	@test -n "$(DRIVES)" || { echo "usage: make qualify DRIVES=/dev/nvme0n1[,...] [CAPACITY=NAME] [SPEC=NAME|PATH]"; exit 2; }
	@mkdir -p $(REPORT)
	$(GOTESTSUM) --format testname --jsonfile $(REPORT)/go-test.json -- \
	  -count=1 -timeout=$(TIMEOUT) ./acceptance -args $(QUALIFY_ARGS) -destructive

junit:
	@mkdir -p $(REPORT)
	$(GOTESTSUM) --format testname --jsonfile $(REPORT)/go-test.json -- \
	  -count=1 ./acceptance -args -report=$(abspath $(REPORT))

# junit-check runs mikepenz/action-junit-report's released dist/index.js
# (kept in acceptance/internal/junit/testdata) with node, offline, and
# prints the counts, check conclusion, annotations and job summary it
# computes. Default: the golden all-inconclusive and one-failure files; give
# JUNIT=report/junit.xml for a run's own. Not part of make test.
JUNIT ?=
junit-check:
	@command -v node >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing: nodejs"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs >/dev/null; \
	  else echo "missing: node (install with: sudo apt-get install nodejs)"; exit 1; fi; }
	.ci/junit-check $(JUNIT)

# lint: gofmt over every tracked Go file (the gofmt of $(GO)'s own
# toolchain); go vet for Linux; for macOS, where replay must build (a live
# run there refuses -drives), go vet, go build and the suite's test binary;
# and actionlint over .github/workflows, which checks the run: scripts with
# shellcheck, installed here as root when missing. Not part of make test.
lint:
	@gofmt=$$($(GO) env GOROOT)/bin/gofmt; out=$$($$gofmt -l $$(git ls-files '*.go')) || exit 1; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=darwin $(GO) build ./...
	GOOS=darwin $(GO) test -c -o /dev/null ./acceptance
	@command -v shellcheck >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing: shellcheck"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null; \
	  else echo "missing: shellcheck (install with: sudo apt-get install shellcheck); actionlint checks the run: scripts only with it"; fi; }
	$(GO) tool actionlint

fuzz:
	$(GO) test ./fiojob -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./fiojob -run='^$$' -fuzz='^FuzzDecodeFast$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./specs -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME)

# bench: the parser and report benchmarks, and one cell through the suite
# against the same fio job run bare (the harness's overhead around fio).
bench: deps
	$(GO) test -run='^$$' -bench=. -benchmem ./fiojob ./specs ./acceptance/internal/report ./acceptance/internal/device/...
	$(GO) test -run='^$$' -bench=Cell -benchtime=5x ./acceptance/internal/e2e
	$(GO) test -run='^$$' -bench=. -benchmem ./acceptance/internal/fleet
	$(GO) test -run='^$$' -bench=FleetReplay -benchtime=1x ./acceptance/internal/e2e

# bench-plan times one live run of a loop spec (scaling 1, 2, 3 drives, full
# preconditioning) on three 256 MiB loop devices with the planner of BASE
# and with this tree's, and checks that both give the same verdicts.
BASE ?=
bench-plan: deps
	$(if $(BASE),BASE=$(BASE)) .ci/bench-plan
