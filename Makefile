# drivequal: qualify NVMe SSDs against their vendor's published figures.
#
#   make demo                      replay the D7-PS1010 brief and print its tables
#   make test                      every test, the loop-device ones too (as root)
#   make plan DRIVES=/dev/nvme0n1  what a qualification would do; writes nothing
#   make qualify DRIVES=/dev/nvme0n1,/dev/nvme1n1 [CAPACITY=1.92TB] [SPEC=...]
#                                  a real run: DESTROYS everything on DRIVES

GO       ?= go
SPEC     ?= solidigm-d7-ps1010
DRIVES   ?=
CAPACITY ?=
TIMEOUT  ?= 48h
REPORT   ?= report
FUZZTIME ?= 15s
GOTESTSUM = $(GO) tool gotestsum

QUALIFY_ARGS = -spec=$(SPEC) -drives=$(DRIVES) -report=$(abspath $(REPORT)) $(if $(CAPACITY),-capacity=$(CAPACITY))

.PHONY: test demo plan qualify junit lint fuzz bench deps

# deps installs what the tests drive when it is missing: fio, and the
# util-linux, fdisk and e2fsprogs tools the loop-device tests use.
deps:
	@missing=; \
	for c in fio:fio losetup:util-linux blkdiscard:util-linux sfdisk:fdisk mkfs.ext4:e2fsprogs; do \
	  command -v $${c%%:*} >/dev/null 2>&1 || missing="$$missing $${c#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "missing:$$missing (install with: sudo apt-get install$$missing); loop-device tests will skip"; \
	  fi; \
	fi

test: deps
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout=20m ./...

demo:
	$(GO) test -count=1 ./acceptance -args -report=$(abspath $(REPORT))

plan:
	@test -n "$(DRIVES)" || { echo "usage: make plan DRIVES=/dev/nvme0n1[,...] [CAPACITY=NAME] [SPEC=NAME|PATH]"; exit 2; }
	$(GO) test -count=1 ./acceptance -args $(QUALIFY_ARGS) -dry-run

qualify: deps
	@test -n "$(DRIVES)" || { echo "usage: make qualify DRIVES=/dev/nvme0n1[,...] [CAPACITY=NAME] [SPEC=NAME|PATH]"; exit 2; }
	@mkdir -p $(REPORT)
	$(GOTESTSUM) --format testname --junitfile $(REPORT)/junit.xml --junitfile-testcase-classname short -- \
	  -count=1 -timeout=$(TIMEOUT) ./acceptance -args $(QUALIFY_ARGS) -destructive

junit:
	@mkdir -p $(REPORT)
	$(GOTESTSUM) --format testname --junitfile $(REPORT)/junit.xml --junitfile-testcase-classname short -- \
	  -count=1 ./acceptance -args -report=$(abspath $(REPORT))

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fuzz:
	$(GO) test ./fiojob -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME)
	$(GO) test ./specs -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME)

# bench: the parser and report benchmarks, and one cell through the suite
# against the same fio job run bare (the harness's overhead around fio).
bench: deps
	$(GO) test -run='^$$' -bench=. -benchmem ./fiojob ./specs ./acceptance/internal/report ./acceptance/internal/device
	$(GO) test -run='^$$' -bench=Cell -benchtime=5x ./acceptance/internal/e2e
