# SPDX-License-Identifier: GPL-2.0
#
# Front door of the tick broadcast series. See README.md.
#
#   make            prepare the workspace, build our kernel, boot it once
#                   under QEMU with the deep idle state and print a report
#   make check      every test, on our kernel and on the pristine base
#   make bench      our kernel against the pristine base, side by side
#   make series     the series as git format-patch files (TB_BASE=tree: apply)
#
# The workspace (base tree, build directories, ccache, run logs) lives in
# $(TB_CACHE), ~/.cache/tick-broadcast unless set.

PYTHON ?= python3
TB := $(PYTHON) tools/testing/tick-broadcast/tb.py

# make bench RUNS=2 SCALING_RUNS=1: fewer boots per kernel and workload;
# WORKLOADS=arm64-halt,arm64-irqoff: only those; PART=coalesce: only the
# wakeup coalescing boots; PART=deterministic: only the QEMU -icount boots;
# PART=storm: only the wake-up storm (every CPU to the same deadlines)
BENCH_ARGS := $(if $(RUNS),--runs $(RUNS)) $(if $(SCALING_RUNS),--scaling-runs $(SCALING_RUNS)) \
	      $(if $(WORKLOADS),--workloads $(WORKLOADS)) $(if $(PART),--part $(PART))

.PHONY: all report check check-quick bench stress deps prepare build scenario kunit series \
	series-steps unit mutate absorb range-diff

all: report

report:
	$(TB) report ours

check:
	$(TB) check

bench:
	$(TB) bench $(BENCH_ARGS)

# Long runs that try to lose a wakeup, on ours and the base: 1000 random
# CPU hotplug cycles, 50 suspend-to-idle cycles, 300 broadcast device
# hand-overs between two modules, a 20-minute soak mixing them, each under
# a lateness probe on every CPU; then a short mix on the debug (lockdep,
# KASAN, timer objects) and KCSAN kernels. About 2.5 hours; KINDS=hotplug,soak
# VARIANTS=,debug SCALE=0.1 for less. make check runs the short mix.
STRESS_ARGS := $(if $(KINDS),--kinds $(KINDS)) $(if $(VARIANTS),--variants '$(VARIANTS)') \
	       $(if $(SCALE),--scale $(SCALE))

stress:
	$(TB) stress $(STRESS_ARGS)

# One scenario per tree: the fast loop while working on the code.
check-quick:
	$(TB) check --quick

# The series as git format-patch files in $(TB_CACHE)/series/;
# TB_BASE=/path/to/linux also applies it there (git am, after checking
# that the files it replaces or patches are the ones it was made against);
# PART=fixes: only the standalone fixes of the base ($(TB_CACHE)/series-fixes/).
series:
	$(TB) series $(if $(PART),--part $(PART)) $(if $(TB_BASE),--base $(TB_BASE))

# Every step of the series (patch) built on its own in a worktree, its
# KUnit suites run where it has them; FIRST=n LAST=m: only patches n..m.
# BOOT=1 also builds each step's scenario kernel (ours' configuration) and
# boots det-hpet-halt, periodic-halt and pit-halt on it, from the test
# cpuidle driver's patch on (the fixes before it: skipped). Longer: about
# 3 minutes a step, 10 more for the first kernel build.
STEPS_ARGS := $(if $(FIRST),--first $(FIRST)) $(if $(LAST),--last $(LAST)) \
	      $(if $(filter 1,$(BOOT)),--boot)

series-steps:
	$(TB) series steps $(STEPS_ARGS)

# Fold edits of the files at kernel paths into the patches that last
# touched those lines, and rewrite the series.
absorb:
	$(TB) series absorb

# The series at commit OLD against NEW (default: the working tree),
# patch by patch: make range-diff OLD=HEAD~3 [NEW=HEAD]
range-diff:
	$(TB) series range-diff $(or $(OLD),HEAD) $(NEW)

# Break the core and the glue on purpose, one small substitution at a
# time, and report which fast test catches each (ONLY=id,id: just those).
mutate:
	$(PYTHON) tools/testing/tick-broadcast/mutate.py $(if $(ONLY),--only $(ONLY))

deps:
	$(TB) deps

prepare:
	$(TB) prepare

build:
	$(TB) build ours base

# make scenario NAME=hpet-halt TREE=base
scenario:
	$(TB) scenario $(or $(NAME),all) $(or $(TREE),ours)

kunit:
	$(TB) kunit $(or $(TREE),ours)

# The testbed's own unit tests (parsing and verdicts over recorded guest
# output, import layering, Debian's mypy over every module): seconds, no
# build.
unit:
	$(TB) unit
