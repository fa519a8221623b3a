# SPDX-License-Identifier: GPL-2.0
#
# Front door of the tick broadcast series. See README.md.
#
#   make            prepare the workspace, build our kernel, boot it once
#                   under QEMU with the deep idle state and print a report
#   make check      every test, on our kernel and on the pristine base
#   make bench      our kernel against the pristine base, side by side
#
# The workspace (base tree, build directories, ccache, run logs) lives in
# $(TB_CACHE), ~/.cache/tick-broadcast unless set.

PYTHON ?= python3
TB := $(PYTHON) tools/testing/tick-broadcast/tb.py

.PHONY: all report check check-quick bench deps prepare build scenario kunit

all: report

report:
	$(TB) report ours

check:
	$(TB) check

bench:
	$(TB) bench

# One scenario per tree: the fast loop while working on the code.
check-quick:
	$(TB) check --quick

deps:
	$(TB) deps

prepare:
	$(TB) prepare

build:
	$(TB) build ours
	$(TB) build base

# make scenario NAME=hpet-halt TREE=base
scenario:
	$(TB) scenario $(or $(NAME),all) $(or $(TREE),ours)

kunit:
	$(TB) kunit $(or $(TREE),ours)
