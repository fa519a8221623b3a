#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mutation testing: break the broadcast code on purpose, see what catches it.

Each mutant is one small substitution in one of our kernel files (the
decision core or the glue), named after the rule it breaks. It is
applied to a scratch copy of our workspace tree ($TB_CACHE/linux-<v>/
mutate: the sources hard-linked to the ours tree, its build directory
copied, a mutated file written as a new file so the ours tree never
sees it), built incrementally, and tested by the fast tests in order:

  1. a core mutant: the core suite (tick_broadcast_core) on UML, with
     kunit.py run in the scratch tree's .build-um;
  2. then, unless that caught it, and for every glue mutant: every KUnit
     suite of ours (core, live, trace, devices) on x86_64 under QEMU with
     4 CPUs (kunit.py exec on the scratch tree's .build-x86_64).

A live mutant (one with scenarios to boot) is built into the x86_64
kernel instead and judged by booting those scenarios on it: caught when
a check of any of them fails. These are the breaks only timing can
see (a wakeup late, not lost), there to show the deterministic lateness
bounds of the det-* scenarios failing (scenarios.py).

A mutant is caught by the first stage with a failing case, or a run
that crashes or times out; it survives if every case passes. A mutant
that does not build, or whose text is no longer in its file, is an
error of this list, not a score. The report (one row per mutant, the
cases that caught it, and the score) is printed and written to
$TB_CACHE/runs/mutate/report.txt, with each run's logs beside it.

	mutate.py [--only ID[,ID...]] [--list]

The ours tree must have been prepared and built (make build, or
tb.py build ours); the unmutated tree must pass both stages, which is
checked first.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Set, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import runs  # noqa: E402
from arches import ARCHES  # noqa: E402
import scenarios  # noqa: E402
import workspace  # noqa: E402
from kunitcmd import UML_ARGS, boot_args, kunit_py  # noqa: E402
from progress import Failed, die, elapsed, log, run_logged  # noqa: E402
from results import Status  # noqa: E402

CORE = 'kernel/time/tick-broadcast-core.c'
CORE_H = 'kernel/time/tick-broadcast-core.h'
GLUE = 'kernel/time/tick-broadcast.c'
OUT = workspace.RUNS / 'mutate'
UML_BUILD = '.build-um'
KUNIT_TIMEOUT = 120	# seconds; the suites take under 10 when nothing hangs
# The core suite's case that trips the core's warning runs here too: a
# mutant run's taint does not matter.
WARN_CASE = ['--kernel_args', 'tick_broadcast_kunit.warn=1']


@dataclass(frozen=True)
class Mutant:
	"""Replace old (exactly once in path) by new; boot: the scenarios
	that judge it (a live mutant), else the KUnit suites do; variant:
	the kernel a live mutant is built into (debug: lockdep's checks, no
	lateness bounds)."""
	id: str
	path: str
	what: str
	old: str
	new: str
	boot: Tuple[str, ...] = ()
	variant: str = ''


MUTANTS = [
	# ---------------------------------------------------------- the core
	Mutant('expire-no-rearm', CORE, 'expiry leaves the device disarmed with sleepers left',
	       '\tbc->armed = next;\n', '\tbc->armed = KTIME_MAX;\n'),
	Mutant('expire-armed-on-sleeper', CORE,
	       'expiry notes the hrtimer device on the sleeper it is armed for, not on the CPU running it',
	       '\tbc->armed_on = this_cpu;\n', '\tbc->armed_on = first;\n'),
	Mutant('expire-forgets-forced', CORE, 'expiry does not wake the forced CPUs',
	       '\t\tbitmap_or(wake, wake, bc->force, bc->nr_cpus);\n', ''),
	Mutant('coalesce-beyond-window', CORE, 'coalescing wakes sleepers up to twice the window early',
	       'ktime_t limit = ktime_add_ns(now, bc->window), next',
	       'ktime_t limit = ktime_add_ns(now, 2 * bc->window), next'),
	Mutant('coalesce-periodic-cpu', CORE, 'coalescing wakes a CPU whose tick is periodic early',
	       '(t <= now || test_bit(i * BITS_PER_LONG + bit, bc->early_ok))', '1'),
	Mutant('woken-keeps-wakeup', CORE, 'a woken CPU keeps its time: later expiries wake it again',
	       '\t\t\t\twakeup[bit] = KTIME_MAX;\n', ''),
	Mutant('expire-forgets-pending', CORE, 'a CPU the expiry wakes is not marked pending',
	       '\t\tbc->pending[i] |= woken;\n', ''),
	Mutant('expire-first-word-only', CORE, 'expiry walks only the first word of the oneshot mask',
	       '\tfor (i = 0; i < words; i++) {', '\tfor (i = 0; i < 1; i++) {'),
	Mutant('expire-early-ok-word-bit', CORE,
	       'past the first word, coalescing reads the early_ok bit of another CPU',
	       'test_bit(i * BITS_PER_LONG + bit, bc->early_ok)', 'test_bit(bit, bc->early_ok)'),
	Mutant('expire-arms-word-bit', CORE,
	       'past the first word, the re-arm names another CPU for the interrupt',
	       '\t\t\t\tfirst = i * BITS_PER_LONG + bit;\n', '\t\t\t\tfirst = bit;\n'),
	Mutant('rearm-not-earliest', CORE,
	       'the re-arm after expiry is for the first sleeper found, not the earliest',
	       '\t\t\t} else if (t < next) {', '\t\t\t} else if (next == KTIME_MAX) {'),
	Mutant('enter-fast-ignores-force', CORE_H,
	       'the inline enter takes a forced CPU queued again for the same time',
	       '\t    test_bit(cpu, bc->force) || test_bit(cpu, bc->pending) ||\n',
	       '\t    test_bit(cpu, bc->pending) ||\n'),
	Mutant('enter-fast-no-arm', CORE_H,
	       'the inline enter queues a new earliest sleeper without arming the device',
	       '\tif (wakeup < bc->armed) {\n\t\t__tick_bc_arm(bc, wakeup, cpu);',
	       '\tif (0 && wakeup < bc->armed) {\n\t\t__tick_bc_arm(bc, wakeup, cpu);'),
	Mutant('enter-fast-arms-hrtimer', CORE_H,
	       'the inline enter arms the hrtimer device without learning where it went',
	       '(wakeup < bc->armed || !tick_bc_owner_elsewhere(bc, cpu))',
	       '!tick_bc_owner_elsewhere(bc, cpu)'),
	Mutant('owner-cached-offline', CORE_H,
	       'the owner of the last arming is trusted after the hotplug code moved the timer',
	       '\treturn bc->armed_on >= 0 && test_bit(bc->armed_on, bc->online) ? bc->armed_on : -1;',
	       '\treturn bc->armed_on;'),
	Mutant('enter-fast-owner-sleeps', CORE_H,
	       'the inline enter lets the hrtimer owner go deep when it arms nothing',
	       '(owner >= 0 && owner != (int)cpu)', '(owner >= 0)'),
	Mutant('enter-skips-pending', CORE, 'enter skips the pending check (woken CPU queued again)',
	       '\tif (test_bit(cpu, bc->pending)) {', '\tif (0 && test_bit(cpu, bc->pending)) {'),
	Mutant('enter-arms-late', CORE, 'enter arms only for a wakeup 1 ms before the armed time',
	       '\tif (wakeup >= bc->armed)\n\t\treturn TICK_BC_ENTER_QUEUED;',
	       '\tif (wakeup + NSEC_PER_MSEC >= bc->armed)\n\t\treturn TICK_BC_ENTER_QUEUED;'),
	Mutant('pull-asks-only-where-it-is', CORE,
	       'the pull misses a timer the hotplug code moved off the dead CPU',
	       '\t    (bc->armed_on != (int)dead_cpu && bc->ops->owner(bc) != (int)dead_cpu))',
	       '\t    bc->ops->owner(bc) != (int)dead_cpu)'),
	Mutant('owner-may-sleep', CORE, 'the hrtimer owner may go deep (the owner -EBUSY rule)',
	       '\treturn owner == (int)cpu;\n}', '\treturn false;\n}'),
	Mutant('enter-owner-no-backout', CORE,
	       'an enter that became the hrtimer owner does not back out',
	       '\tif (hrtimer && bc->armed_on == (int)cpu) {', '\tif (0) {'),
	Mutant('exit-never-forces', CORE, 'an exit past its event reprograms instead of forcing',
	       '\tif (wakeup > now || bc->armed > now)\n\t\treturn false;', '\treturn false;'),
	Mutant('exit-forces-undue', CORE, 'an exit past its event forces although the device is not due',
	       '\tif (wakeup > now || bc->armed > now)\n\t\treturn false;',
	       '\tif (wakeup > now)\n\t\treturn false;'),
	Mutant('exit-woken-reprograms', CORE_H, 'a woken exit reprograms its device',
	       '\tif (__test_and_clear_bit(cpu, bc->pending))\n\t\treturn TICK_BC_EXIT_WOKEN;',
	       '\tif (__test_and_clear_bit(cpu, bc->pending))\n\t\treturn TICK_BC_EXIT_REPROGRAM;'),
	Mutant('offline-keeps-force', CORE, 'the force bit survives going offline',
	       '\ttick_bc_cpu_reset(bc, cpu);\n\tforce_clear(bc, cpu);\n}', '\ttick_bc_cpu_reset(bc, cpu);\n}'),
	Mutant('reset-keeps-sleeping', CORE, 'a reset CPU stays in the oneshot mask',
	       '\t__clear_bit(cpu, bc->oneshot);\n\t__clear_bit(cpu, bc->pending);\n}',
	       '\t__clear_bit(cpu, bc->pending);\n}'),
	Mutant('reset-keeps-pending', CORE, 'a reset CPU keeps its pending bit',
	       '\t__clear_bit(cpu, bc->oneshot);\n\t__clear_bit(cpu, bc->pending);\n}',
	       '\t__clear_bit(cpu, bc->oneshot);\n}'),
	Mutant('retrigger-arms-nothing', CORE, 'a new or resumed device is not armed for the sleepers',
	       '\tbc_arm(bc, 0, cpu);\n\treturn true;', '\treturn true;'),
	Mutant('switch-hands-nobody-over', CORE, 'the switch to oneshot mode hands nobody over',
	       '\t\t__set_bit(cpu, bc->oneshot);\n\t\tbc->wakeup[cpu] = next_period;\n', ''),
	Mutant('switch-trusts-any-arming', CORE,
	       'the switch takes any device arming as the hand-over arming',
	       '\tif (device_armed) {', '\tif (1) {'),
	Mutant('off-after-force', CORE, 'TICK_BROADCAST_OFF still works after FORCE',
	       '\t\tif (bc->forced)\n\t\t\tbreak;\n', ''),
	Mutant('pull-no-rearm', CORE, 'the hrtimer broadcast is not taken from a dead CPU',
	       '\tbc_arm(bc, bc->armed, this_cpu);\n\treturn was_forced;', '\treturn was_forced;'),
	Mutant('new-device-keeps-armed', CORE, "a new device inherits the old one's arming",
	       '\tbc->hrtimer = dev && (dev->features & CLOCK_EVT_FEAT_HRTIMER);\n\tbc->armed = KTIME_MAX;',
	       '\tbc->hrtimer = dev && (dev->features & CLOCK_EVT_FEAT_HRTIMER);'),
	Mutant('new-device-keeps-kind', CORE,
	       'a device that replaces the hrtimer one is still taken for it',
	       '\tbc->hrtimer = dev && (dev->features & CLOCK_EVT_FEAT_HRTIMER);',
	       '\tbc->hrtimer |= dev && (dev->features & CLOCK_EVT_FEAT_HRTIMER);'),
	Mutant('early-reentry-refused', CORE,
	       'a CPU woken early that comes back for the same time is refused, with nothing armed',
	       '\tbc->wakeup[cpu] = wakeup;\n\t__set_bit(cpu, bc->oneshot);\n\t/*',
	       '\tif (bc->window && wakeup < bc->armed)\n\t\treturn TICK_BC_ENTER_BUSY_FORCED;\n'
	       '\tbc->wakeup[cpu] = wakeup;\n\t__set_bit(cpu, bc->oneshot);\n\t/*'),
	Mutant('disarm-keeps-armed', CORE, 'a device shut down (suspend, last OFF) still counts as armed',
	       'void tick_bc_disarmed(struct tick_bc *bc)\n{\n\tbc->armed = KTIME_MAX;\n}',
	       'void tick_bc_disarmed(struct tick_bc *bc)\n{\n}'),
	Mutant('busy-ignores-forced', CORE_H, 'the device may stop while only forced CPUs rely on it',
	       '\treturn bc->nr_force || !bitmap_empty(bc->oneshot, bc->nr_cpus);',
	       '\treturn !bitmap_empty(bc->oneshot, bc->nr_cpus);'),
	Mutant('force-not-latched', CORE, 'FORCE does not make later OFFs no-ops',
	       '\t\tbc->forced = true;\n\t\tfallthrough;', '\t\tfallthrough;'),
	Mutant('first-on-missed', CORE, 'the first ON into an empty periodic mask is not reported',
	       'ch.first = was_empty && (ch.joined || !bitmap_empty(bc->periodic, bc->nr_cpus));',
	       'ch.first = was_empty && !ch.joined && !bitmap_empty(bc->periodic, bc->nr_cpus);'),
	Mutant('periodic-tick-ipis-self', CORE, 'a periodic broadcast tick also IPIs its own CPU',
	       '\tself = __test_and_clear_bit(this_cpu, wake);\n\treturn self && !tick_bc_hrtimer(bc);',
	       '\tself = test_bit(this_cpu, wake);\n\treturn self && !tick_bc_hrtimer(bc);'),
	Mutant('woken-exit-keeps-pending', CORE_H, 'a woken exit leaves its pending bit (I2)',
	       '\tif (__test_and_clear_bit(cpu, bc->pending))\n\t\treturn TICK_BC_EXIT_WOKEN;',
	       '\tif (test_bit(cpu, bc->pending))\n\t\treturn TICK_BC_EXIT_WOKEN;'),
	# ---------------------------------------------------------- the glue
	Mutant('periodic-irq-rearms', GLUE,
	       'a periodic interrupt late for oneshot mode re-arms the device itself',
	       '\tif (!bc_periodic_mode()) {\n\t\traw_spin_unlock(&tick_broadcast_lock);\n'
	       '\t\ttick_handle_oneshot_broadcast(dev);\n\t\treturn;\n\t}\n', ''),
	Mutant('periodic-irq-returns', GLUE, 'a periodic interrupt late for oneshot mode just returns',
	       '\t\ttick_handle_oneshot_broadcast(dev);\n\t\treturn;\n', '\t\treturn;\n'),
	Mutant('switch-ignores-expiry', GLUE,
	       'right after a periodic tick the switch re-arms for the tick it delivered',
	       '\t\tif (armed && expires > next)\n\t\t\tnext = expires;\n'
	       '\t\tbc_show_handover(next, this_cpu);\n\t}\n'
	       '\tif (cpu_switches)\n'
	       '\t\ttick_bc_switch_oneshot(&tick_bc, this_cpu, bc_tick_runs_only_due(), next, armed);\n',
	       '\t\tbc_show_handover(next, this_cpu);\n\t}\n'
	       '\tif (cpu_switches)\n'
	       '\t\ttick_bc_switch_oneshot(&tick_bc, this_cpu, bc_tick_runs_only_due(), next,\n'
	       '\t\t\t\t       armed && expires <= next);\n'),
	Mutant('flush-no-recheck', GLUE,
	       'the deferred write does not re-check for newer requests after unlocking',
	       '\t\traw_spin_unlock(&bc_req.lock);\n\t}\n\tbc_req_paid();\n}',
	       '\t\traw_spin_unlock(&bc_req.lock);\n\t\tbreak;\n\t}\n\tbc_req_paid();\n}'),
	# the same break in the debug kernel: lockdep's check of the hand-off
	Mutant('flush-no-recheck-lockdep', GLUE,
	       'the deferred write does not re-check (seen by lockdep, debug kernel)',
	       '\t\traw_spin_unlock(&bc_req.lock);\n\t}\n\tbc_req_paid();\n}',
	       '\t\traw_spin_unlock(&bc_req.lock);\n\t\tbreak;\n\t}\n\tbc_req_paid();\n}',
	       boot=('hpet-irqoff', 'hotplug-irqoff'), variant='debug'),
	Mutant('expiry-handler-no-rearm', GLUE, 'the expiry handler does not arm the device for the sleepers left',
	       '\telse\n\t\tbc_op_arm(&tick_bc, tick_bc.armed, next_cpu);\n', ''),
	Mutant('enter-no-flush', GLUE, 'enter records an arming and never writes it',
	       '\tif (out.armed)\n\t\tbc_dev_flush();\n', ''),
	Mutant('expiry-no-flush', GLUE, 'expiry re-arms and never writes it',
	       '\tbc_send_ipis(wake);\n\tbc_dev_flush();\n', '\tbc_send_ipis(wake);\n'),
	Mutant('install-two-steps', GLUE,
	       'a device installed in oneshot mode gets its handler after the lock was let go of',
	       '\tif (installed && notify && tick_broadcast_oneshot_active()) {\n'
	       '\t\t__tick_broadcast_switch_to_oneshot(false);\n'
	       '\t\tnotify = false;\n'
	       '\t}\n'
	       '\traw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);\n',
	       '\traw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);\n'
	       '\tif (installed && notify && tick_broadcast_oneshot_active()) {\n'
	       '\t\traw_spin_lock_irqsave(&tick_broadcast_lock, flags);\n'
	       '\t\t__tick_broadcast_switch_to_oneshot(false);\n'
	       '\t\traw_spin_unlock_irqrestore(&tick_broadcast_lock, flags);\n'
	       '\t\tnotify = false;\n'
	       '\t}\n'),
	Mutant('install-resets-installer', GLUE,
	       'a device installed in oneshot mode resets the installing CPU as if it switched',
	       '\t\t__tick_broadcast_switch_to_oneshot(false);\n',
	       '\t\t__tick_broadcast_switch_to_oneshot(true);\n'),
	Mutant('install-no-sync', GLUE, 'replacing the device does not write the deferred arming first',
	       '\tif (cur)\n\t\tbc_dev_sync();\n\t__clockevents_exchange_device(cur, dev);',
	       '\t__clockevents_exchange_device(cur, dev);'),
	Mutant('replaced-keeps-handler', GLUE, 'the replaced device keeps its interrupt handler',
	       '\tif (cur)\n\t\tcur->event_handler = clockevents_handle_noop;\n', ''),
	Mutant('offline-stays-in-core', GLUE, 'a CPU going offline stays in the masks, forced',
	       '\ttick_bc_offline(&tick_bc, cpu);\n', ''),
	Mutant('resume-no-retrigger', GLUE, 'resume does not arm the device for the sleepers',
	       '\t/* Anybody still relying on it gets it re-evaluated at once. */\n'
	       '\ttick_bc_retrigger(&tick_bc);\n', ''),
	Mutant('last-off-shuts-down', GLUE, 'the last OFF in oneshot mode shuts the device down under sleepers',
	       '\tif (ch.last && (bc_periodic_mode() || !tick_bc_busy(&tick_bc)))', '\tif (ch.last)'),
	Mutant('exit-no-reprogram', GLUE, 'an early exit does not reprogram the CPU\'s device',
	       '\t\tclockevents_program_event(dev, dev->next_event, true);\n', ''),
	Mutant('enter-keeps-local', GLUE, "enter leaves the CPU's device running",
	       '\t\t/* Only a queued enter stops its local device. */\n'
	       '\t\tclockevents_switch_state(dev, CLOCK_EVT_STATE_SHUTDOWN);\n', ''),
	Mutant('never-steered', GLUE, 'the interrupt is never steered to the CPU it is armed for',
	       '\tif (!(bcdev->features & CLOCK_EVT_FEAT_DYNIRQ) || cpumask_equal(bcdev->cpumask, mask))\n',
	       '\tif (1)\n'),
	# ---------------------------------------- live: late, not lost
	Mutant('armed-200us-late', GLUE, 'the broadcast device fires 200 us after the time it is armed for',
	       '\tclockevents_program_event(bcdev, expires, true);\n',
	       '\tclockevents_program_event(bcdev, ktime_add_us(expires, 200), true);\n',
	       boot=('det-hpet-halt',)),
	Mutant('armed-200ms-late-rare', GLUE,
	       'one device write in 512 arms the device 200 ms after the time decided',
	       '\tclockevents_program_event(bcdev, expires, true);\n',
	       '\tstatic unsigned int n;\n\n'
	       '\tif (!(++n % 512))\n\t\texpires = ktime_add_ms(expires, 200);\n'
	       '\tclockevents_program_event(bcdev, expires, true);\n',
	       boot=('hpet-halt',)),
	Mutant('ipi-200us-late', GLUE, 'the wake IPIs go out 200 us after the expiry',
	       '\tif (cpu < nr_cpu_ids)\n\t\tper_cpu(tick_cpu_device, cpu).evtdev->broadcast(mask);\n',
	       '\tktime_t until = ktime_add_us(ktime_get(), 200);\n\n'
	       '\twhile (ktime_before(ktime_get(), until))\n\t\tcpu_relax();\n'
	       '\tif (cpu < nr_cpu_ids)\n\t\tper_cpu(tick_cpu_device, cpu).evtdev->broadcast(mask);\n',
	       boot=('det-hpet-halt',)),
	Mutant('last-cpu-waits-next-expiry', GLUE,
	       "the last online CPU's wake IPI waits for the next expiry",
	       '\tif (cpu < nr_cpu_ids)\n\t\tper_cpu(tick_cpu_device, cpu).evtdev->broadcast(mask);\n',
	       '\tstatic struct cpumask held;\n\tunsigned int last = cpumask_last(cpu_online_mask);\n'
	       '\tbool hold = cpumask_test_cpu(last, mask);\n\n'
	       '\tcpumask_or(mask, mask, &held);\n\tcpumask_clear(&held);\n'
	       '\tif (hold) {\n\t\tcpumask_clear_cpu(last, mask);\n\t\tcpumask_set_cpu(last, &held);\n\t}\n'
	       '\tcpu = cpumask_first(mask);\n'
	       '\tif (cpu < nr_cpu_ids)\n\t\tper_cpu(tick_cpu_device, cpu).evtdev->broadcast(mask);\n',
	       boot=('det-hpet-halt',)),
	# ---------------------------------------- live: suspend to RAM
	Mutant('suspend-behind-the-core', GLUE,
	       'suspend shuts the broadcast device down and the core still thinks it armed',
	       '\t\tbc_shutdown(bc_dev());\n', '\t\tclockevents_shutdown(bc_dev());\n',
	       boot=('s3-halt',)),
	# ---------------------------------------- live: woken early
	Mutant('coalesce-lowres-tick', GLUE,
	       'a CPU with a low-resolution tick may be woken early (handles a tick twice)',
	       '\treturn __this_cpu_read(tick_cpu_device.evtdev)->event_handler == hrtimer_interrupt;\n',
	       '\treturn true;\n', boot=('lowres-coalesce-halt',)),
]


def check_list(tree: Path) -> List[str]:
	"""Errors of the list against the files in tree (a kernel tree or the repo)."""
	errors: List[str] = []
	seen: Set[str] = set()
	for m in MUTANTS:
		if m.id in seen:
			errors.append(f'{m.id}: duplicate id')
		seen.add(m.id)
		n = (tree / m.path).read_text().count(m.old)
		if n != 1:
			errors.append(f'{m.id}: its text occurs {n} times in {m.path}, not once')
	return errors


def write_new(path: Path, data: bytes) -> None:
	"""Write path as a new file: a hard link to the ours tree stays unchanged."""
	tmp = path.with_name(path.name + '.mutate-tmp')
	tmp.write_bytes(data)
	os.replace(tmp, path)


# ---------------------------------------------------------------- scratch tree

def scratch_dir() -> Path:
	return workspace.workdir() / 'mutate'


def make_scratch(ours: Path, variants: Iterable[str] = ('',)) -> Path:
	"""The scratch tree: ours hard-linked, its build directories (of
	variants) copied.

	The series' files are copied rather than linked: preparing the ours
	tree rewrites them in place, which would change the scratch tree
	under a run.
	"""
	scratch = scratch_dir()
	# The UML build is the scratch tree's own: keep it for the next run.
	uml = scratch.with_name('mutate' + UML_BUILD)
	if (scratch / UML_BUILD).exists():
		shutil.rmtree(uml, ignore_errors=True)
		(scratch / UML_BUILD).rename(uml)
	if scratch.exists():
		shutil.rmtree(scratch)
	log(f'mutate: scratch tree {scratch} (hard links to {ours})')
	subprocess.run(['cp', '-al', str(ours), str(scratch)], check=True)
	for d in scratch.glob('.build-*'):
		shutil.rmtree(d)
	if uml.exists():
		uml.rename(scratch / UML_BUILD)
	for build in sorted({workspace.build_dir_name(v) for v in variants}):
		subprocess.run(['cp', '-a', str(ours / build), str(scratch / build)], check=True)
	stamp = ours / '.tb-series-files'
	for p in stamp.read_text().split() if stamp.exists() else []:
		if (ours / p).exists():
			write_new(scratch / p, (ours / p).read_bytes())
	return scratch


def restore(scratch: Path, ours: Path, paths: Iterable[str]) -> None:
	for p in paths:
		write_new(scratch / p, (ours / p).read_bytes())


# ---------------------------------------------------------------- stages

def results(json_path: Path, logtext: str) -> Tuple[List[str], str]:
	"""(failed case names, summary) of a kunit.py run; a crash fails.

	Names are suite.case (suite.case.parameter); the cases a crash or a
	hang cut off are "suite (no result)".
	"""
	try:
		text = json_path.read_text()
		doc = json.loads(text)
	except (OSError, ValueError):
		return ['(no results: crash or timeout)'], 'no results'
	failed: List[str] = []
	for row in workspace.kunit_rows(text, logtext, 'kunit'):
		name = row.name[len('kunit/'):].replace('/', '.')
		if row.status is not Status.FAIL or name == 'run':
			continue
		if name == workspace.NO_RESULT:
			name = 'later suites (no result)'
		elif name.endswith('.' + workspace.NO_RESULT):
			name = name[:-len(workspace.NO_RESULT) - 1] + ' (no result)'
		if name not in failed:
			failed.append(name)
	done = re.search(r'Testing complete\. (Ran \d+ tests: .*)', logtext)
	if not done or not (doc.get('sub_groups') or doc.get('test_cases')):
		failed.append('(incomplete run: crash or timeout)')
	return failed, done.group(1) if done else 'incomplete'


def x86_build(scratch: Path, logdir: Path, variant: str = '') -> bool:
	cmd = ['make', 'ARCH=x86_64', f'O={workspace.build_dir_name(variant)}',
	       f'--jobs={workspace.JOBS}', 'CC=ccache gcc', 'bzImage']
	label = '-'.join(['x86_64'] + ([variant] if variant else []))
	rc, _ = run_logged(cmd, logdir / f'build-{label}.log', f'mutate: {label} build',
			   cwd=scratch, env=workspace.build_env())
	return rc == 0


def x86_kunit(scratch: Path, logdir: Path) -> Tuple[List[str], str]:
	js = logdir / 'kunit-x86_64.json'
	js.unlink(missing_ok=True)
	cmd = kunit_py('exec', '--arch', 'x86_64', '--build_dir', workspace.build_dir_name(),
		       *boot_args('x86_64', timeout=KUNIT_TIMEOUT), *WARN_CASE, f'--json={js}',
		       'tick_broadcast_*')
	logfile = logdir / 'kunit-x86_64.log'
	run_logged(cmd, logfile, 'mutate: KUnit on x86_64', cwd=scratch, env=workspace.build_env())
	return results(js, logfile.read_text(errors='replace'))


def uml_kunit(scratch: Path, logdir: Path) -> Optional[Tuple[List[str], str]]:
	"""Build and run the core suite on UML; None if the build failed."""
	js = logdir / 'kunit-uml.json'
	js.unlink(missing_ok=True)
	cmd = kunit_py('run', *UML_ARGS, f'--build_dir={UML_BUILD}', '--jobs', str(workspace.JOBS),
		       '--timeout', str(KUNIT_TIMEOUT), *WARN_CASE, f'--json={js}', 'tick_broadcast_core')
	logfile = logdir / 'kunit-uml.log'
	run_logged(cmd, logfile, 'mutate: core suite on UML', cwd=scratch, env=workspace.build_env())
	text = logfile.read_text(errors='replace')
	if 'Testing complete' not in text and re.search(r'error:|Error \d', text):
		return None
	return results(js, text)


def boot_stage(scratch: Path, logdir: Path, names: Sequence[str],
	       variant: str = '') -> Optional[Tuple[List[str], str]]:
	"""Boot scenarios names on the scratch tree's x86_64 kernel (of
	variant): (failed checks as scenario:check, note); None if the build
	failed."""
	if not x86_build(scratch, logdir, variant):
		return None
	image = scratch / workspace.build_dir_name(variant) / ARCHES['x86_64'].image
	failed, notes = [], []
	for name in names:
		sc = scenarios.SCENARIOS[name]
		out = logdir / name
		b = runs.boot_scenario(image, sc, out, what=f'mutate {name}')
		checks, _, _ = runs.judge('ours', sc, out, b, not variant)
		bad = [(c.name, c.detail) for c in checks if not c.ok]
		failed += [f'{name}:{c}' for c, _ in bad]
		notes += [f'{name} {c}: {d}' for c, d in bad]
	return failed, '; '.join(notes) or 'every check passed'


def run_stages(scratch: Path, logdir: Path, core: bool, boot: Sequence[str] = (),
	       variant: str = '') -> Tuple[str, List[str], str]:
	"""(stage that caught it or '', failed cases, note) for the tree as it is;
	boot, variant: the scenarios and kernel of a live mutant (see
	boot_stage())."""
	logdir.mkdir(parents=True, exist_ok=True)
	if boot:
		res = boot_stage(scratch, logdir, boot, variant)
		if res is None:
			return 'error', [], 'x86_64 build failed'
		return ('boot' if res[0] else ''), res[0], res[1]
	if core:
		res = uml_kunit(scratch, logdir)
		if res is None:
			return 'error', [], 'UML build failed'
		if res[0]:
			return 'UML', res[0], res[1]
	if not x86_build(scratch, logdir):
		return 'error', [], 'x86_64 build failed'
	failed, summary = x86_kunit(scratch, logdir)
	return ('x86_64' if failed else ''), failed, summary


# ---------------------------------------------------------------- report

def short(cases: Sequence[str]) -> str:
	"""The failed cases, without the common name prefix, at most three."""
	names = [c.replace('tick_broadcast_', '') for c in cases]
	more = f' (+{len(names) - 3})' if len(names) > 3 else ''
	return ', '.join(names[:3]) + more


def report(rows: Sequence[Tuple[Mutant, str, List[str], str, float]]) -> str:
	lines = [f'{"mutant":28} {"file":6} {"caught by":8} cases', '-' * 100]
	killed = errors = 0
	for m, stage, cases, note, secs in rows:
		where = 'core' if m.path in (CORE, CORE_H) else 'glue'
		if stage == 'error':
			errors += 1
			lines.append(f'{m.id:28} {where:6} {"ERROR":8} {note}')
			continue
		killed += bool(stage)
		lines.append(f'{m.id:28} {where:6} {stage or "SURVIVED":8} '
			     f'{short(cases) if stage else m.what} [{elapsed(secs)}]')
	valid = len(rows) - errors
	lines += ['-' * 100, f'score: {killed}/{valid} mutants caught'
		  + (f', {errors} errors in the list' if errors else '')]
	return '\n'.join(lines)


def main() -> int:
	ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
	ap.add_argument('--only', help='comma-separated mutant ids')
	ap.add_argument('--list', action='store_true', help='list the mutants and check them')
	args = ap.parse_args()
	ours = workspace.tree_dir('ours')
	mutants = MUTANTS
	if args.only:
		want = set(args.only.split(','))
		mutants = [m for m in MUTANTS if m.id in want]
		if want - {m.id for m in mutants}:
			die(f'no such mutant: {", ".join(sorted(want - {m.id for m in mutants}))}')
	if args.list:
		for m in mutants:
			print(f'{m.id:28} {m.path:32} {m.what}')
		errors = check_list(workspace.REPO)
		print('\n'.join(errors) or f'{len(MUTANTS)} mutants, all apply')
		return 1 if errors else 0
	if not workspace.kernel_image('ours').exists():
		die('build the ours tree first: make build (or tb.py build ours)')
	errors = check_list(ours)
	if errors:
		die('the mutant list does not match the ours tree:\n' + '\n'.join(errors))

	variants = sorted({m.variant for m in mutants} | {''})
	for v in variants:
		if not workspace.kernel_image('ours', v).exists():
			die(f'build the ours tree first: tb.py build ours --variant={v}')
	scratch = make_scratch(ours, variants)
	shutil.rmtree(OUT, ignore_errors=True)
	stage = ''
	# the KUnit stages only for mutants that KUnit judges
	if any(not m.boot for m in mutants):
		stage, cases, note = run_stages(scratch, OUT / 'unmutated', core=True)
	for v in variants:
		live = sorted({n for m in mutants if m.variant == v for n in m.boot})
		if not stage and live:
			stage, cases, note = run_stages(scratch, OUT / 'unmutated', False, live, v)
	if stage:
		die(f'the unmutated tree fails ({stage}): {short(cases) or note}; see {OUT}/unmutated')
	log(f'mutate: the unmutated tree passes ({note}); {len(mutants)} mutants')

	rows = []
	for n, m in enumerate(mutants, 1):
		t0 = time.time()
		log(f'mutate: [{n}/{len(mutants)}] {m.id}: {m.what}')
		text = (ours / m.path).read_text()
		write_new(scratch / m.path, text.replace(m.old, m.new, 1).encode())
		try:
			stage, cases, note = run_stages(scratch, OUT / m.id, m.path in (CORE, CORE_H),
							m.boot, m.variant)
		finally:
			restore(scratch, ours, [m.path])
		rows.append((m, stage, cases, note, time.time() - t0))
		log(f'mutate: {m.id}: {stage or "SURVIVED"} {short(cases)}')
	text = report(rows)
	(OUT / 'report.txt').write_text(text + '\n')
	print(text)
	log(f'mutate: report {OUT}/report.txt, logs in {OUT}/<mutant>/')
	return 0


if __name__ == '__main__':
	try:
		sys.exit(main())
	except Failed as e:
		die(str(e))
