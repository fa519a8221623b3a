# SPDX-License-Identifier: GPL-2.0
#
# Front door of the tick broadcast series. See README.md; "make help"
# lists the targets (the "##" comments below).
#
# The workspace (base tree, build directories, ccache, run logs) lives in
# $(TB_CACHE), ~/.cache/tick-broadcast unless set.

PYTHON ?= python3
TB := $(PYTHON) tools/testing/tick-broadcast/tb.py

.PHONY: all help report check check-quick unit kunit scenario bench stress mutate \
	series series-steps proof absorb range-diff deps prepare build

all: report

help: ## this list
	@sed -n 's/^\([a-z-]*\):.*## \(.*\)/\1\t\2/p' $(firstword $(MAKEFILE_LIST)) | \
		while IFS='	' read t d; do printf '  make %-13s %s\n' "$$t" "$$d"; done

report: ## build our kernel, boot it once, print what the broadcast did
	$(TB) report ours

check: ## every test, on our kernel and on the pristine base
	$(TB) check

check-quick: ## the fast loop: one scenario per kernel, no step builds
	$(TB) check --quick

unit: ## the testbed's own tests and the series' consistency, seconds
	$(TB) unit

kunit: ## the KUnit suites of one tree: TREE=ours|base
	$(TB) kunit $(or $(TREE),ours)

scenario: ## one QEMU scenario: NAME=hpet-halt TREE=base (NAME=all: every one)
	$(TB) scenario $(or $(NAME),all) $(or $(TREE),ours)

# make bench RUNS=2 SCALING_RUNS=1: fewer boots per kernel and workload;
# WORKLOADS=arm64-halt,arm64-irqoff: only those; PART=coalesce, counts,
# deterministic or storm: only that part.
BENCH_ARGS := $(if $(RUNS),--runs $(RUNS)) $(if $(SCALING_RUNS),--scaling-runs $(SCALING_RUNS)) \
	      $(if $(WORKLOADS),--workloads $(WORKLOADS)) $(if $(PART),--part $(PART))

bench: ## our kernel against the pristine base, side by side (hours)
	$(TB) bench $(BENCH_ARGS)

# KINDS=hotplug,soak VARIANTS=,debug SCALE=0.1 for less (tb.py stress --help).
STRESS_ARGS := $(if $(KINDS),--kinds $(KINDS)) $(if $(VARIANTS),--variants '$(VARIANTS)') \
	       $(if $(SCALE),--scale $(SCALE))

stress: ## hours of hotplug, suspend and device hand-over on both kernels
	$(TB) stress $(STRESS_ARGS)

mutate: ## break the code on purpose, see which test catches it (ONLY=id,id)
	$(PYTHON) tools/testing/tick-broadcast/mutate.py $(if $(ONLY),--only $(ONLY))

# BASE=6.1 (with PART=fixes): the fixes made for Debian's linux-source-6.1,
# in $(TB_CACHE)/series-fixes-6.1/.
series: ## the series as git format-patch files (PART=fixes BASE=6.1; TB_BASE=tree: git am)
	$(TB) series $(if $(PART),--part $(PART)) $(if $(BASE),--kernel $(BASE)) \
		$(if $(TB_BASE),--base $(TB_BASE))

# FIRST=n LAST=m: only patches n..m; BOOT=1 also boots det-hpet-halt,
# periodic-halt and pit-halt on each step's scenario kernel.
STEPS_ARGS := $(if $(FIRST),--first $(FIRST)) $(if $(LAST),--last $(LAST)) \
	      $(if $(filter 1,$(BOOT)),--boot)

series-steps: ## every patch built and its KUnit suites run (FIRST=n LAST=m BOOT=1)
	$(TB) series steps $(STEPS_ARGS)

# BASE=6.1: on Debian's linux-source-6.1, the test patches and the fixes
# made for it (a kernel build and a KUnit boot per fix).
proof: ## each fix's KUnit cases fail before it and pass after (BASE=6.1; long)
	$(TB) series proof $(if $(BASE),--kernel $(BASE))

absorb: ## fold edits of the files at kernel paths into their patches
	$(TB) series absorb

range-diff: ## the series at commit OLD (HEAD) against NEW (the working tree), patch by patch
	$(TB) series range-diff $(or $(OLD),HEAD) $(NEW)

deps: ## install the Debian packages the testbed needs
	$(TB) deps

prepare: ## unpack the base and make the trees ours and base
	$(TB) prepare

build: ## build both kernels
	$(TB) build ours base
