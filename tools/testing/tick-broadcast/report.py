# SPDX-License-Identifier: GPL-2.0
"""What `make` prints: one boot of our kernel, told as a person would
count it.

The boot is SCENARIO (x86_64 q35, four CPUs, the HPET broadcasting for
the test cpuidle driver's deep state, halt flavour) under QEMU's
deterministic clock, with its plan extended by PLAN_TAIL. Every figure is
guest time or a count, and repeats from boot to boot whatever the host's
load:

  lateness   how late the timers of 300 random 1-20 ms sleeps per CPU
             fired, with the deep state off (the control: local timers)
             and on (the broadcast), in the same boot; what the
             broadcast adds, in microseconds and as a ratio
  device     the broadcast device's interrupts during the broadcast run
  wakeups    the IPIs that carried a broadcast wakeup, counted by a probe
             on the architecture's broadcast function (guest/init ipis)
             in a further run of its own, so that the probe's cost
             stays out of the lateness figures; with that run's device
             interrupts beside them

The clock's blind spot: a device access costs one instruction, a cache
miss nothing, and no lock is ever contended. What hardware charges for
those is make bench's.
"""

from typing import List

import guestdata
import scenarios
from results import Check
from scenarios import SAMPLES, Scenario

SCENARIO = 'det-hpet-halt'
IPI_SAMPLES = SAMPLES // 3
PLAN_TAIL = ['ipis:on', 'snap:ipi0', f'lat:ipi:{IPI_SAMPLES}', 'snap:ipi1', 'ipis:off']
# Guest time is the instructions' count, but which vCPU runs when is
# QEMU's round robin, which the host's timing moves (a vCPU's turn also
# ends on a real-time kick): the counts vary by a few per cent from boot
# to boot, loaded or not, where the lateness percentiles stay within
# 0.1 us (2026-12-06, 3 boots on a quiet host and 2 with three busy loops
# on its 2 cores: device interrupts 1510-1533, wakeup IPIs 440-465).
CLOCK = ('QEMU\'s deterministic clock (-icount shift=0,sleep=off): guest time counts\n'
	 'instructions, a nanosecond each; the vCPUs run in turn, idle time is skipped.\n'
	 'The lateness percentiles repeat within 0.1 us from boot to boot, on a quiet or\n'
	 'a loaded host; the counts move by a few per cent with the order the vCPUs run\n'
	 'in. A device access costs one instruction here, which hardware prices higher.')
# A normal task's sleeps end up to its timer slack late (50 us by
# default, and tbprobe keeps it): the control's lateness is mostly that.
SLACK_US = 50


def scenario() -> Scenario:
	"""The report's scenario: SCENARIO with PLAN_TAIL."""
	sc = scenarios.SCENARIOS[SCENARIO]
	return scenarios.with_plan(sc, sc.plan + PLAN_TAIL)


def _lateness(m: guestdata.Metrics) -> List[str]:
	c, b = m.lateness.get('control'), m.lateness.get('bc')
	if not c or not b:
		return ['timer lateness: no results (see the verdicts below)']
	out = [f'timer lateness of sleeps of 1-20 ms on every CPU, each with the {SLACK_US} us '
	       'timer slack',
	       'of a normal task:',
	       f'  {"":5}{"deep state off":>16}{"deep state on":>16}   the broadcast adds',
	       '  {:5}{:>16}{:>16}'.format('', f'({c["n"]:.0f} sleeps)', f'({b["n"]:.0f} sleeps)')]
	for p in ('p50', 'p90'):
		add = b[p] - c[p]
		above = (b[p] - SLACK_US) / (c[p] - SLACK_US) if c[p] > SLACK_US else float('nan')
		out.append(f'  {p:5}{c[p]:13.1f} us{b[p]:13.1f} us   {add:+.1f} us: {b[p] / c[p]:.2f}x, '
			   f'{above:.2f}x above the slack')
	return out


def _interrupts(res: guestdata.Report, counts: guestdata.Counts) -> List[str]:
	s = res.snaps
	out = [f'broadcast device ({counts.bcdev}) interrupts in the broadcast run: {counts.irq0}']
	if res.ipis is None or 'ipi0' not in s or 'ipi1' not in s:
		return out + ['IPIs that carried a broadcast wakeup: not counted (no ipis step)']
	if res.ipis_lost:
		return out + [f'IPIs that carried a broadcast wakeup: not counted, the probe lost '
			      f'{res.ipis_lost} of its events']
	sends, per_cpu = guestdata.wakeups(res.ipis)
	dev = (guestdata.interrupts(s['ipi1']).get('0', 0) -
	       guestdata.interrupts(s['ipi0']).get('0', 0))
	return out + [
		f'IPIs that carried a broadcast wakeup, counted in a further run of '
		f'{IPI_SAMPLES} sleeps per CPU:',
		f'  {sum(per_cpu.values())} wakeups ('
		+ ', '.join(f'cpu{c} {n}' for c, n in per_cpu.items()) + f') in {sends} sends, '
		f'against {dev} device interrupts in that run',
		'  (the CPU that takes the device\'s interrupt wakes from it without an IPI)']


def text(tree: str, sc: Scenario, status: str, console: str, data: str,
	 checks: List[Check]) -> str:
	"""The report of one boot of scenario() on tree's kernel."""
	res = guestdata.parse(data)
	m = guestdata.metrics(res)
	counts = m.counts
	lines = [f'{tree} kernel {guestdata.kernel_release(console) or "?"}, x86_64 q35, '
		 f'{sc.smp} CPUs, the test cpuidle driver\'s deep state ({sc.flavour} flavour)',
		 'clock: ' + CLOCK, '']
	if counts is None:
		lines.append(f'the guest reported no snapshots (status {status})')
	else:
		lines.append(f'broadcast device: {counts.bcdev}, cpuidle driver: {counts.driver}')
		lines.append('deep-idle entries in the broadcast run: ' + ', '.join(
			f'cpu{c} {n}' for c, n in sorted(scenarios.deep_counts(sc, counts).items())))
		lines += _interrupts(res, counts)
	lines += [''] + _lateness(m) + ['', 'verdicts:']
	lines += [f'  {"ok  " if c.ok else "FAIL"} {c.name}: {c.detail}' for c in checks]
	return '\n'.join(lines)
