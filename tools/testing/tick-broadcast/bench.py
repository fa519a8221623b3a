# SPDX-License-Identifier: GPL-2.0
"""make bench: our broadcast against the pristine base, side by side.

Both kernels are built from the same config with the same test cpuidle
driver and booted alternately (base, ours, ours, base, ...) under the same
QEMU, so that drift of the shared host hits both alike. Each workload is
run RUNS times per kernel; every figure is the median over the runs, with
the range [min-max] beside it. Only ratios within one invocation mean
anything: the machine is shared and noisy.

Workloads (x86 QEMU TCG, -cpu qemu64: the LAPIC timer stops in the deep
state, the HPET legacy channel is the broadcast device):

  hpet-halt    deep state "sti; hlt": the wakeup interrupt is handled
               inside the state.
  hpet-irqoff  deep state polled with interrupts off, as intel_idle's
               mwait states: the wakeup interrupt is handled after exit.
               Polling vCPUs take host CPU from the others, so this state
               is slow even without broadcast.

  arm64-halt, arm64-irqoff
               the same on arm64 (-M virt -cpu cortex-a57, a device tree
               whose arch timer is not "always-on": the broadcast runs on
               the hrtimer pseudo device and wakes CPUs by IPI).

  psci         arm64 with the kernel's own driver, cpuidle-psci (the
               test driver built but off): device-tree states
               cpu-retention and cpu-sleep ("local-timer-stop"; both a
               WFI in QEMU's PSCI), the governor choosing between them.
  acpi-c2      x86 with acpi_idle (kernel variant acpi): _CST C1 (HLT)
               and C2 (an I/O port read QEMU answers at once: the CPU
               never sleeps in C2 and every idle vCPU goes round enter,
               broadcast enter, exit as fast as it can). The entries per
               second against the ARAT control price the broadcast
               enter+exit under contention from all CPUs.
               Both controls keep the shallow state (deep state off means
               the timer-stopping state only), and the ARAT control boots
               the same firmware states on a timer that never stops.

Each has two controls without broadcast: the same boot with the deep
state disabled (local timers, shallow halt), and a boot with
-cpu qemu64,+arat (the LAPIC timer keeps running, no broadcast; on arm64
QEMU's own device tree, arch timer "always-on") and the very same deep
state ("ARAT").

Lateness: guest/tbprobe.c, SAMPLES random 1-20 ms absolute sleeps per
vCPU on every vCPU at once. Costs: the kernel's function profiler (same
entry points on both kernels) during a separate, shorter run, so that it
does not disturb the lateness figures; the enter+exit pair cost from the
tick_broadcast_bench KUnit case (an in-kernel loop, interrupts off);
expiry cost against the number of vCPUs; and the core's expiry against
n = 8..512 simulated sleepers (tick_broadcast_core_bench, ours only).
Where the time goes: one more hpet-halt boot per run and kernel traces
the same generic events on both kernels (hops.py) and splits the late
wakeups into hops.

Coalescing (--part coalesce runs only this): hpet-halt (and arm64-halt)
again under ICOUNT, the base and ours with each coalescing window W of
COALESCE_W_US set on the command line (tick_broadcast_coalesce_us=),
traced during the lateness
run with the generic events plus, on ours, tick_bc_enter and
tick_bc_expire. One row per kernel and W: broadcast interrupts, LOC
interrupts, wake IPIs and early wakes per second, how early (coalesce.py,
from the trace), lateness, and our expiries against the offline optimum
of the same wakeup times (coalesce.greedy_stabs()).

Deterministic (--part deterministic runs only this): the workloads of
DET_WORKLOADS booted again under QEMU -icount (ICOUNT), DET_RUNS times
per kernel with the same seed: lateness of the broadcast run, its
control and the ARAT boot, and the enter+exit pair by part, with the
spread over the boots. Device accesses cost one instruction there.

Wake-up storm (--part storm runs only this): x86 HPET, halt flavour,
under ICOUNT, STORM_SMP vCPUs (above 16 the NR_CPUS=64 kernels, variant
counts.CPUS64): every CPU sleeps to the same deadlines
(guest/init's storm step), so that each broadcast expiry wakes all of
them at once; the lateness of the last CPU out of each round, with the
deep state off (local timers) and on, STORM_RUNS seeds per kernel. The
vCPUs run in turn in this mode, so the last CPU out waits for the others'
work whatever the kernel. A vCPU runs until it idles or until a device
write re-arms a timer of QEMU's, which ends its turn: one that holds a
lock then makes the others spin for their turns (counts.py counts that
waiting apart). Real contention, a lock's cache line moving between
CPUs, does not happen.

Counts (--part counts runs only this; counts.py): each kernel booted
under ICOUNT with a QEMU plugin (plugin/tbcount.c) that counts, per
enter, exit and expiry, the instructions executed (apart: those of the
local tick handler, the wake IPIs and device programming, which are not
the broadcast's own), those under
tick_broadcast_lock, device accesses and IPIs, for counts.COUNT_SETS (x86
HPET at 4, 16 and 64 vCPUs, arm64 hrtimer at 4 and 8; random deadlines
and the storm, where at 64 each expiry wakes many sleepers at once on
both kernels), twice each to show the counts repeat; and a cost model that prices them
with per-access costs of real hardware.

Output: one table per workload on stdout and in bench.txt, raw data in
raw.json and every boot's logs, the lateness CDFs in lateness-cdf.png,
all under $TB_CACHE/runs/bench/.
"""

import argparse
import dataclasses
import fcntl
import json
import re
import shutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import coalesce
import counts
import firmware
import guestdata
import hops
import qemu
import scenarios
import workspace
from arches import ARCHES
from progress import log

RUNS = 5
SAMPLES = 300
PROF_SAMPLES = 100
SCALING_SMP = (2, 4, 8)
SCALING_RUNS = 3
KBENCH_LOOPS = 5000

BASE_PLAN = ['snap:start', 'deep:off', f'lat:control:{SAMPLES}', 'snap:mid', 'deep:on',
	     f'lat:bc:{SAMPLES}', 'snap:end']
PROF_PLAN = ['prof:on', 'snap:p0', f'lat:prof:{PROF_SAMPLES}', 'snap:p1', 'prof:off']
ARAT_PLAN = ['snap:start', 'deep:on', 'snap:mid', f'lat:bc:{SAMPLES}', 'snap:end']
SCALING_PLAN = ['snap:start', 'deep:on', 'snap:mid', f'lat:bc:{SAMPLES // 2}', 'snap:end']
TRACE_PLAN = ['deep:off', 'trace:on', f'lat:control:{SAMPLES}', 'trace:off:control',
	      'deep:on', 'trace:on', f'lat:bc:{SAMPLES}', 'trace:off:bc']
HALT = scenarios.timerstop('halt')

# The bench cases are KUNIT_CASE_SLOW: KUnit runs slow cases unless a
# kunit.filter (e.g. "speed>slow") excludes them, and none is given here;
# the glob picks tick_broadcast_bench and tick_broadcast_core_bench.
KBENCH_CMDLINE = ['kunit.enable=1', 'kunit.filter_glob=tick_broadcast*bench',
		  f'tick_broadcast_bench_kunit.loops={KBENCH_LOOPS}',
		  'tick_broadcast_kunit.bench=1']

# Everything measured in one boot (boot_metrics()), as raw.json has it.
Figures = Dict[str, Any]


@dataclass(frozen=True)
class Workload:
	"""One workload of make bench.

	doc		what it is, in its table's title
	arch		the architecture
	arat		whether it has the ARAT control too (the same deep state
			on a timer that never stops)
	flavour		the test driver's deep state ('': the kernel's own driver)
	firmware	the firmware tables whose states the kernel's own driver
			takes (firmware.py; '': none)
	variant		the kernel variant ('': the test driver's)
	prof		whether a profiler run follows (the halt flavour's does)
	states		the idle states whose entries the table counts
	smp		vCPUs
	"""
	doc: str
	arch: str
	arat: bool
	flavour: str = ''
	firmware: str = ''
	variant: str = ''
	prof: bool = False
	states: Tuple[str, ...] = ()
	smp: int = 4


WORKLOADS = {
	'hpet-halt': Workload(flavour='halt', arat=True, arch='x86_64',
			      doc='HPET broadcast, sti;hlt deep state, 4 vCPUs'),
	'hpet-irqoff': Workload(flavour='irqoff', arat=True, arch='x86_64',
				doc='HPET broadcast, irq-off polled deep state, 4 vCPUs'),
	'arm64-halt': Workload(flavour='halt', arat=True, arch='arm64',
			       doc='arm64 hrtimer broadcast, wfi + irq deep state, 4 vCPUs'),
	'arm64-irqoff': Workload(flavour='irqoff', arat=True, arch='arm64',
				 doc='arm64 hrtimer broadcast, irq-off wfi deep state, 4 vCPUs'),
	# the kernel's own drivers (scenarios.PSCI, scenarios.ACPI)
	'psci': Workload(arat=True, arch='arm64', firmware='psci', prof=True,
			 states=('cpu-retention', 'cpu-sleep'),
			 doc='arm64 cpuidle-psci, DT states cpu-retention + cpu-sleep '
			     '(local-timer-stop), hrtimer broadcast, 4 vCPUs'),
	'acpi-c2': Workload(arat=True, arch='x86_64', variant='acpi', firmware='acpi-c2',
			    prof=True, states=('C1', 'C2'), smp=scenarios.ACPI.smp,
			    doc='x86 acpi_idle, _CST C1 (HLT) + C2 (I/O port read, returns at '
				f'once), HPET broadcast, {scenarios.ACPI.smp} vCPUs (see '
				'scenarios.ACPI)'),
}

PROF_FUNCS = {
	'__tick_broadcast_oneshot_control': 'enter/exit call (profiler)',
	'tick_handle_oneshot_broadcast': 'expiry handler (profiler)',
	'lapic_timer_broadcast': 'wake IPI send (profiler)',
	'tick_broadcast': 'wake IPI send, arm64 (profiler)',
}

TREES = ('base', 'ours')

COALESCE_W_US = (0, 100, 500, 2000)
# snap:end before the trace is printed, which takes longer on ours (more events).
COALESCE_PLAN = ['snap:start', 'deep:on', 'snap:mid', 'trace:on', f'lat:bc:{SAMPLES}',
		 'snap:end', 'trace:off:bc']
COALESCE_EVENTS = 'tb.events=tick_bc:tick_bc_enter+tick_bc:tick_bc_expire'
PARTS_RUN = ('all', 'coalesce', 'deterministic', 'storm', 'counts')
# QEMU's deterministic clock (scenarios.ICOUNT). A device access (HPET,
# LAPIC, arch timer) costs one instruction there, so device costs are
# left out.
ICOUNT = scenarios.ICOUNT
DET_RUNS = 3
# acpi-c2 spins through C2 on every vCPU: 4 minutes a boot in this mode.
DET_WORKLOADS = ('hpet-halt', 'hpet-irqoff', 'arm64-halt', 'arm64-irqoff', 'psci')
STORM_SMP = (8, 16, 32)
STORM_RUNS = 3
STORM_ROUNDS = 300
STORM_PLAN = ['deep:off', f'storm:control:{STORM_ROUNDS}', 'deep:on', 'snap:mid',
	      f'storm:bc:{STORM_ROUNDS}', 'snap:end']


# ---------------------------------------------------------------- metrics

def boot_metrics(status: str, console: str, data: str) -> Figures:
	"""Everything measured in one boot, as a flat dict of numbers."""
	res = guestdata.parse(data)
	m: Figures = {'status': status}
	for run in ('control', 'bc'):
		x = res.lat.get(run, {}).get('all')
		if x:
			for k in ('p50', 'p90', 'p99', 'max'):
				m[f'{run}_{k}'] = x[k]
	snaps = res.snaps
	if 'mid' in snaps and 'end' in snaps:
		a, b = snaps['mid'], snaps['end']
		secs = b.uptime - a.uptime
		if secs > 0:
			ia, ib = guestdata.interrupts(a), guestdata.interrupts(b)
			m['irq0_per_s'] = (ib.get('0', 0) - ia.get('0', 0)) / secs
			m['loc_per_s'] = (ib.get('LOC', 0) - ia.get('LOC', 0)) / secs
			bc = guestdata.BC_IPI
			m['bcipi_per_s'] = (ib.get(bc, 0) - ia.get(bc, 0)) / secs
			m['residency_pct'] = guestdata.deep_residency_pct(a, b)
			for name, per_cpu in guestdata.state_entries(a, b).items():
				m[f'entries_{name}_per_s'] = sum(per_cpu.values()) / secs
	if 'p0' in snaps and 'p1' in snaps:
		secs = snaps['p1'].uptime - snaps['p0'].uptime
		for fn, (hits, us) in guestdata.prof(data, PROF_FUNCS).items():
			if hits:
				m[f'prof_{fn}_ns'] = us * 1000 / hits
				if secs > 0:
					m[f'prof_{fn}_per_s'] = hits / secs
	m.update(guestdata.kbench(console))
	if 'control_p99' in m and 'bc_p99' in m and m['control_p99'] > 0:
		m['bc_over_control'] = m['bc_p99'] / m['control_p99']
	return m


# ---------------------------------------------------------------- running

def boot(tree: str, label: str, plan: Sequence[str], outroot: Path, cmdline: Sequence[str] = (),
	 cpu: Optional[str] = None, smp: int = 4, seed: int = 1, arch: str = workspace.ARCH,
	 timer_stops: bool = True, variant: str = '', fw: Optional[str] = None,
	 extra_qemu: Sequence[str] = ()) -> Figures:
	"""One boot of tree's kernel (variant) with firmware fw (firmware.py);
	extra_qemu: more QEMU arguments (ICOUNT)."""
	out = outroot / label
	shutil.rmtree(out, ignore_errors=True)
	opts = firmware.boot_options(fw, smp, timer_stops) if fw else firmware.BootOptions()
	b = qemu.boot(qemu.Boot(kernel=workspace.kernel_image(tree, variant, arch), plan=plan,
				outdir=out, cmdline=cmdline, cpu=cpu, smp=smp,
				qemu=opts.qemu + list(extra_qemu), timeout=300, seed=seed,
				what=f'bench {label}', arch=arch, timer_stops=timer_stops,
				dtb=opts.dtb))
	m = boot_metrics(b.status, b.console, b.data)
	m['raw'] = {n: guestdata.raw(b.data, n) for n in ('control', 'bc')}
	m['secs'] = b.secs
	log(f'bench {label}: p99 bc {m.get("bc_p99", float("nan")):.0f} us, control '
	    f'{m.get("control_p99", float("nan")):.0f} us')
	return m


def trace_boot(tree: str, label: str, outroot: Path, seed: int) -> Figures:
	"""One traced hpet-halt boot: hop summaries of the control and broadcast runs."""
	out = outroot / label
	shutil.rmtree(out, ignore_errors=True)
	b = qemu.boot(qemu.Boot(kernel=workspace.kernel_image(tree), plan=TRACE_PLAN, outdir=out,
				cmdline=HALT, cpu='qemu64', timeout=300, seed=seed,
				what=f'bench {label}'))
	m: Figures = {'status': b.status, 'secs': b.secs}
	for name in ('control', 'bc'):
		m[name] = hops.summary(hops.sleeps(guestdata.trace(b.data, name)))
	return m


def coalesce_boot(tree: str, w_us: int, label: str, outroot: Path, seed: int,
		  arch: str = workspace.ARCH) -> Figures:
	"""One traced halt-flavour boot under ICOUNT; ours with coalescing
	window w_us."""
	out = outroot / label
	shutil.rmtree(out, ignore_errors=True)
	cmdline = HALT + [COALESCE_EVENTS]
	if tree == 'ours':
		cmdline.append(f'tick_broadcast_coalesce_us={w_us}')
	b = qemu.boot(qemu.Boot(kernel=workspace.kernel_image(tree, arch=arch), plan=COALESCE_PLAN,
				outdir=out, cmdline=cmdline, timeout=600, seed=seed,
				qemu=list(ICOUNT), what=f'bench {label}', arch=arch))
	data, secs = b.data, b.secs
	m = boot_metrics(b.status, b.console, data)
	m['secs'] = secs
	events = guestdata.trace(data, 'bc')
	res = guestdata.parse(data)
	m['coalesce'] = coalesce.summary(coalesce.expiries(events), w_us * 1000)
	m.update(per_sleep(res, m['coalesce'], coalesce.bc_handler_runs(events)))
	snaps = res.snaps
	if arch != 'x86_64' and 'mid' in snaps and 'end' in snaps:
		# no IRQ0 there: the hrtimer device's firings, from the same trace
		secs = snaps['end'].uptime - snaps['mid'].uptime
		if secs > 0:
			m['irq0_per_s'] = coalesce.bc_handler_runs(events) / secs
	log(f'bench {label}: p99 {m.get("bc_p99", float("nan")):.0f} us, broadcast '
	    f'{m.get("irq0_per_s", float("nan")):.0f}/s')
	return m


def per_sleep(res: guestdata.Report, co: Optional[Dict[str, Optional[float]]],
	      bc_runs: Optional[int] = None) -> Dict[str, float]:
	"""Interrupts per 100 tbprobe sleeps of the broadcast run (snapshots
	mid..end around it, the trace over it): kernels that wake late also
	complete fewer sleeps per second, so per second would flatter them.
	bc_runs: the broadcast device's firings where there is no IRQ0 to
	count (arm64: the hrtimer device)."""
	n = res.lat.get('bc', {}).get('all', {}).get('n')
	s = res.snaps
	if not n or 'mid' not in s or 'end' not in s:
		return {}
	ia, ib = guestdata.interrupts(s['mid']), guestdata.interrupts(s['end'])
	out = {'irq0_per_100': 100 * (ib.get('0', 0) - ia.get('0', 0)) / n,
	       'loc_per_100': 100 * (ib.get('LOC', 0) - ia.get('LOC', 0)) / n}
	if bc_runs is not None and 'LOC' not in ib:
		out = {'irq0_per_100': 100 * bc_runs / n}
	for k in ('ipis', 'early', 'waking'):
		x = co.get(k) if co else None
		if x is not None:
			out[f'{k}_per_100'] = 100 * x / n
	return out


def run_coalesce(outroot: Path, runs: int = RUNS,
		 arch: str = workspace.ARCH) -> Dict[Union[str, int], List[Figures]]:
	"""{'base': [m...], 0: [m...], 100: [...], ...}: W in microseconds."""
	cols: List[Union[str, int]] = ['base', *COALESCE_W_US]
	raw: Dict[Union[str, int], List[Figures]] = {c: [] for c in cols}
	tag = '' if arch == workspace.ARCH else f'{arch}-'
	for r in range(runs):
		for c in (cols if r % 2 == 0 else cols[::-1]):
			tree = 'base' if c == 'base' else 'ours'
			w = c if isinstance(c, int) else 0
			raw[c].append(coalesce_boot(tree, w, f'coalesce-{tag}{c}-{r}', outroot, r + 1,
						    arch))
	return raw


def workload_boots(raw: Dict[str, Any], w: str, tree: str, r: int, outroot: Path,
		   deterministic: bool = False) -> None:
	"""One run of workload w on tree: the broadcast boot and its ARAT control.

	deterministic: under ICOUNT, every run with the same seed, so that the
	spread over the runs is the mode's reproducibility; no profiler run
	(it would only time instructions).
	"""
	wl = WORKLOADS[w]
	arch = wl.arch
	flavour = wl.flavour
	# the test driver's state, or the firmware's for the kernel's own drivers
	timerstop = scenarios.timerstop(flavour) if flavour else []
	fw = wl.firmware or None
	extra = KBENCH_CMDLINE if flavour == 'halt' else []
	plan = BASE_PLAN + (PROF_PLAN if (flavour == 'halt' or wl.prof) and
			    not deterministic else [])
	if wl.firmware:
		plan = scenarios.keep_shallow(plan)
	extra_qemu = ICOUNT if deterministic else []
	seed, tag = (1, 'det-') if deterministic else (r + 1, '')
	raw['workloads'][w][tree].append(
		boot(tree, f'{tag}{w}-{tree}-{r}', plan, outroot, timerstop + extra, seed=seed,
		     arch=arch, variant=wl.variant, fw=fw, smp=wl.smp, extra_qemu=extra_qemu))
	if wl.arat:
		# x86: an always-running LAPIC timer; arm64: QEMU's own device
		# tree, whose arch timer is "always-on"
		cpu, timer_stops = ('qemu64,+arat', True) if arch == 'x86_64' else (None, False)
		raw['arat'][w][tree].append(
			boot(tree, f'{tag}{w}-arat-{tree}-{r}', ARAT_PLAN, outroot, timerstop,
			     seed=seed, arch=arch, cpu=cpu, timer_stops=timer_stops,
			     variant=wl.variant, fw=fw, smp=wl.smp, extra_qemu=extra_qemu))


def run_deterministic(outroot: Path, runs: int = DET_RUNS,
		      names: Sequence[str] = DET_WORKLOADS) -> Dict[str, Any]:
	"""Workloads names (of DET_WORKLOADS) under ICOUNT, runs times each
	per kernel, all with the same seed."""
	raw: Dict[str, Any] = {
		'workloads': {w: {t: [] for t in TREES} for w in names},
		'arat': {w: {t: [] for t in TREES} for w in names if WORKLOADS[w].arat}}
	for r in range(runs):
		for w in names:
			for tree in TREES if r % 2 == 0 else TREES[::-1]:
				workload_boots(raw, w, tree, r, outroot, deterministic=True)
	return raw


def storm_variant(smp: int) -> str:
	"""The kernel variant that takes smp CPUs (the default's NR_CPUS is 16)."""
	return counts.CPUS64 if smp > 16 else ''


def storm_boot(tree: str, smp: int, seed: int, outroot: Path) -> Figures:
	"""One wake-up storm boot: lateness of the last CPU out of each round
	and of all CPUs, deep state off (control) and on (bc)."""
	label = f'storm-{tree}-smp{smp}-{seed}'
	out = outroot / label
	shutil.rmtree(out, ignore_errors=True)
	b = qemu.boot(qemu.Boot(kernel=workspace.kernel_image(tree, storm_variant(smp)),
				plan=STORM_PLAN, outdir=out,
				cmdline=HALT, smp=smp, qemu=list(ICOUNT), timeout=600, seed=seed,
				what=f'bench {label}'))
	lat = guestdata.parse(b.data).lat
	m: Figures = {'status': b.status, 'secs': b.secs}
	for run, n in re.findall(r'^@@storm (\S+) missed=(\d+)', b.data, re.M):
		m[f'{run}_missed'] = int(n)
	for run in ('control', 'bc'):
		for who in ('last', 'all'):
			for p in ('p50', 'p90', 'p99'):
				x = lat.get(run, {}).get(who, {}).get(p)
				if x is not None:
					m[f'{run}_{who}_{p}'] = x
	if 'bc_last_p50' in m and 'control_last_p50' in m:
		m['added_last_p50'] = m['bc_last_p50'] - m['control_last_p50']
	log(f'bench {label}: last CPU out p50 {m.get("bc_last_p50", float("nan")):.1f} us, '
	    f'control {m.get("control_last_p50", float("nan")):.1f} us')
	return m


def run_storm(outroot: Path, runs: int = STORM_RUNS) -> Dict[int, Dict[str, List[Figures]]]:
	"""{smp: {tree: [m...]}}: seeds 1..runs, the kernels alternating."""
	raw: Dict[int, Dict[str, List[Figures]]] = {n: {t: [] for t in TREES} for n in STORM_SMP}
	for r in range(runs):
		for n in STORM_SMP:
			for tree in TREES if r % 2 == 0 else TREES[::-1]:
				raw[n][tree].append(storm_boot(tree, n, r + 1, outroot))
	return raw


def run_all(outroot: Path, runs: int = RUNS, scaling_runs: int = SCALING_RUNS,
	    names: Sequence[str] = tuple(WORKLOADS)) -> Dict[str, Any]:
	"""Boot every selected workload; the traced boots and the scaling runs
	(x86 HPET) come with hpet-halt."""
	x86 = 'hpet-halt' in names
	raw: Dict[str, Any] = {
		'workloads': {w: {t: [] for t in TREES} for w in names},
		'trace': {t: [] for t in TREES},
		'arat': {w: {t: [] for t in TREES} for w in names if WORKLOADS[w].arat},
		'scaling': {n: {t: [] for t in TREES} for n in SCALING_SMP}}
	for r in range(runs):
		order = TREES if r % 2 == 0 else TREES[::-1]
		for w in names:
			for tree in order:
				workload_boots(raw, w, tree, r, outroot)
		for tree in order if x86 else ():
			raw['trace'][tree].append(trace_boot(tree, f'trace-{tree}-{r}', outroot, r + 1))
	for r in range(scaling_runs if x86 else 0):
		order = TREES if r % 2 == 0 else TREES[::-1]
		for n in SCALING_SMP:
			for tree in order:
				raw['scaling'][n][tree].append(
					boot(tree, f'smp{n}-{tree}-{r}', SCALING_PLAN + PROF_PLAN,
					     outroot, HALT, smp=n, seed=r + 1))
	return raw


# ---------------------------------------------------------------- reporting

def values(runs: Sequence[Figures], key: str) -> List[float]:
	return [m[key] for m in runs if isinstance(m.get(key), (int, float))]


def med(v: Sequence[float]) -> Optional[float]:
	return statistics.median(v) if v else None


def cell(v: Sequence[float], fmt: str = '{:.0f}') -> str:
	if not v:
		return 'n/a'
	lo, hi = min(v), max(v)
	return f'{fmt.format(med(v))} [{fmt.format(lo)}-{fmt.format(hi)}]'


def ratio(a: Sequence[float], b: Sequence[float]) -> str:
	ma, mb = med(a), med(b)
	return f'{ma / mb:.2f}x' if ma is not None and mb else 'n/a'


def table(title: str, rows: List[List[str]], header: List[str]) -> str:
	w0 = max(len(r[0]) for r in rows + [header])
	widths = [w0] + [max(len(r[i]) for r in rows + [header]) for i in range(1, len(header))]
	lines = [title, '  '.join(h.ljust(widths[i]) for i, h in enumerate(header))]
	lines.append('  '.join('-' * w for w in widths))
	for r in rows:
		lines.append('  '.join(c.ljust(widths[i]) for i, c in enumerate(r)))
	return '\n'.join(lines)


def workload_table(name: str, raw: Dict[str, Any]) -> str:
	wl = WORKLOADS[name]
	runs = raw['workloads'][name]
	b, o = runs['base'], runs['ours']
	rows: List[List[str]] = []
	for k, label in (('bc_p50', 'lateness p50 (us)'), ('bc_p90', 'lateness p90 (us)'),
			 ('bc_p99', 'lateness p99 (us)'), ('bc_max', 'lateness max (us)'),
			 ('control_p99', 'control p99, deep state off (us)')):
		rows.append([label, cell(values(b, k)), cell(values(o, k)),
			     ratio(values(o, k), values(b, k))])
	rows.append(['p99 / control p99, same boot', cell(values(b, 'bc_over_control'), '{:.2f}x'),
		     cell(values(o, 'bc_over_control'), '{:.2f}x'),
		     ratio(values(o, 'bc_over_control'), values(b, 'bc_over_control'))])
	if wl.arat:
		ab, ao = raw['arat'][name]['base'], raw['arat'][name]['ours']
		rows.append(['control p99, ARAT same deep state (us)', cell(values(ab, 'bc_p99')),
			     cell(values(ao, 'bc_p99')), ratio(values(ao, 'bc_p99'), values(ab, 'bc_p99'))])
		rb = [x / y for x, y in zip(values(b, 'bc_p99'), values(ab, 'bc_p99'))]
		ro = [x / y for x, y in zip(values(o, 'bc_p99'), values(ao, 'bc_p99'))]
		rows.append(['p99 / ARAT p99, same run', cell(rb, '{:.2f}x'), cell(ro, '{:.2f}x'),
			     ratio(ro, rb)])
	irqs = ((('irq0_per_s', 'broadcast device irqs/s (IRQ0)'),
		 ('loc_per_s', 'LOC irqs/s (local timer + wake IPIs)')) if wl.arch == 'x86_64'
		else (('bcipi_per_s', 'wake IPIs/s (timer broadcast IPI)'),))
	for k, label in irqs + (('residency_pct', 'deep-idle residency (%)'),):
		fmt = '{:.1f}' if 'pct' in k else '{:.0f}'
		rows.append([label, cell(values(b, k), fmt), cell(values(o, k), fmt),
			     ratio(values(o, k), values(b, k))])
	for st in wl.states:
		k = f'entries_{st}_per_s'
		rows.append([f'{st} entries/s, all CPUs', cell(values(b, k)), cell(values(o, k)),
			     ratio(values(o, k), values(b, k))])
		if wl.arat:
			ab, ao = raw['arat'][name]['base'], raw['arat'][name]['ours']
			rows.append([f'{st} entries/s, ARAT control', cell(values(ab, k)),
				     cell(values(ao, k)), ratio(values(ao, k), values(ab, k))])
	if wl.flavour == 'halt':
		rows.append(['enter+exit pair, in-kernel loop (ns)', cell(values(b, 'kbench_pair_ns')),
			     cell(values(o, 'kbench_pair_ns')),
			     ratio(values(o, 'kbench_pair_ns'), values(b, 'kbench_pair_ns'))])
	if wl.flavour == 'halt' or wl.prof:
		ipi = ARCHES[wl.arch].ipi_func
		for fn, label in PROF_FUNCS.items():
			k = f'prof_{fn}_ns'
			if fn in {a.ipi_func for a in ARCHES.values()} and fn != ipi:
				continue
			rows.append([f'{label} (ns)', cell(values(b, k)), cell(values(o, k)),
				     ratio(values(o, k), values(b, k))])
		k = f'prof_{ipi}_per_s'
		rows.append(['wake IPI sends/s (profiler run)', cell(values(b, k)), cell(values(o, k)),
			     ratio(values(o, k), values(b, k))])
	return table(f'== {name}: {wl.doc}, {len(b)}+{len(o)} runs: median [min-max] ==',
		     rows, ['metric', 'base (upstream)', 'ours', 'ours/base'])


# The parts of bench_parts, in the kernel's words, with what each stands for.
PARTS = (
	('pair', 'enter+exit pair, whole'),
	('local_dev', 'local device stop + restart + program (both kernels do it)'),
	('ktime_get', 'clock read'),
	('lock', 'raw spinlock lock+unlock, uncontended'),
	('trylock', 'raw spinlock trylock+unlock'),
	('smp_mb', 'smp_mb()'),
	('seqcount_write', 'lock + seqcount write + unlock'),
	('percpu_inc', 'per-CPU counter increment'),
	('static_key_off', 'disabled static key (a disabled trace point)'),
	('timerqueue', 'timerqueue add+del, 3 others queued'),
	('loop', 'empty loop iteration'),
)


def part_values(runs: Sequence[Figures], key: str) -> List[float]:
	"""bench_parts' key over the boots runs; 'pair-local' is the pair less
	the local device: the broadcast code's own share."""
	out: List[float] = []
	for m in runs:
		p = m.get('kbench_parts') or {}
		if key == 'pair-local':
			if 'pair' in p and 'local_dev' in p:
				out.append(p['pair'] - p['local_dev'])
		elif key in p:
			out.append(p[key])
	return out


def parts_table(raw: Dict[str, Any]) -> str:
	"""The enter+exit pair and its building blocks, both kernels, same boots."""
	runs = raw['workloads']['hpet-halt']

	def vals(tree: str, key: str) -> List[float]:
		return part_values(runs[tree], key)
	if not vals('base', 'pair') and not vals('ours', 'pair'):
		return 'enter+exit parts: no results'
	rows: List[List[str]] = []
	for key, label in PARTS + (('pair-local', 'pair - local device: the broadcast code\'s own share'),):
		b, o = vals('base', key), vals('ours', key)
		rows.append([f'{key}: {label}', cell(b), cell(o), ratio(o, b)])
	n = len(runs['base'])
	return table(f'== enter+exit by part (KUnit bench_parts: in-kernel loops with interrupts off, '
		     f'each part timed on its own in every batch, hpet-halt boots, {n} runs each), ns '
		     'per operation, median [min-max] ==', rows,
		     ['part', 'base (upstream)', 'ours', 'ours/base'])


def deterministic_table(name: str, det: Dict[str, Any]) -> str:
	"""Workload name under ICOUNT: lateness of the broadcast run, its
	control in the same boot (deep state off) and the ARAT boot (the same
	deep state on a timer that never stops), and the enter+exit pair."""
	runs, arat = det['workloads'][name], det['arat'].get(name, {})
	rows: List[List[str]] = []

	def add(label: str, b: Sequence[float], o: Sequence[float], fmt: str = '{:.1f}') -> None:
		rows.append([label, cell(b, fmt), cell(o, fmt), ratio(o, b)])
	for run, label in (('control', 'deep state off'), ('bc', 'broadcast')):
		for p in ('p50', 'p90', 'p99'):
			add(f'lateness {p}, {label} (us)', values(runs['base'], f'{run}_{p}'),
			    values(runs['ours'], f'{run}_{p}'))
	for p in ('p50', 'p90', 'p99'):
		add(f'lateness {p}, ARAT: no broadcast (us)', values(arat.get('base', []), f'bc_{p}'),
		    values(arat.get('ours', []), f'bc_{p}'))
	for p in ('p50', 'p99'):
		added = {}
		for t in TREES:
			bc, ar = med(values(runs[t], f'bc_{p}')), med(values(arat.get(t, []), f'bc_{p}'))
			added[t] = [bc - ar] if bc is not None and ar is not None else []
		add(f'added by the broadcast, {p}: broadcast - ARAT, medians (us)',
		    added['base'], added['ours'])
	for key, label in (('pair', 'enter+exit pair, in-kernel loop (ns)'),
			   ('local_dev', 'of which the local device (ns)'),
			   ('pair-local', 'of which the broadcast code (ns)')):
		b, o = part_values(runs['base'], key), part_values(runs['ours'], key)
		if b or o:
			add(label, b, o, '{:.0f}')
	n = len(runs['base'])
	return table(f'== {name}, deterministic (QEMU -icount shift=0,sleep=off, {n} boots per kernel, '
		     'all with seed 1: the range is the reproducibility; a device access costs one '
		     'instruction here, so device costs are left out and would add to both kernels '
		     'on hardware) ==', rows, ['', 'base (upstream)', 'ours', 'ours/base'])


def storm_table(storm: Dict[int, Dict[str, List[Figures]]]) -> str:
	"""The wake-up storm: one row per vCPU count and measure."""
	rows: List[List[str]] = []
	for n, runs in storm.items():
		# a boot that did not finish measured nothing worth a median
		b, o = ([m for m in runs[t] if m['status'] == 'done'] for t in TREES)
		for key, label in (('control_last_p50', 'last CPU out p50, deep state off'),
				   ('bc_last_p50', 'last CPU out p50, broadcast'),
				   ('added_last_p50', 'added by the broadcast (same boot)'),
				   ('control_last_p99', 'last CPU out p99, deep state off'),
				   ('bc_last_p99', 'last CPU out p99, broadcast'),
				   ('bc_all_p50', 'every CPU p50, broadcast'),
				   ('bc_missed', 'rounds a CPU began past the deadline')):
			rows.append([f'{n} vCPUs: {label}', cell(values(b, key), '{:.1f}'),
				     cell(values(o, key), '{:.1f}'),
				     ratio(values(o, key), values(b, key))])
	nruns = len(next(iter(storm.values()))['base'])
	return table(f'== wake-up storm: hpet-halt, every CPU to the same deadlines '
		     f'({STORM_ROUNDS} rounds 2-5 ms apart), deterministic (QEMU -icount: the '
		     f'vCPUs run in turn), {nruns} seeds per kernel; above 16 vCPUs the '
		     f'{counts.CPUS64} kernels, '
		     'us, median [min-max] ==', rows, ['', 'base (upstream)', 'ours', 'ours/base'])


def hops_table(raw: Dict[str, Any]) -> str:
	"""Where the late wakeups lost their time, from the traced boots."""
	cols = [('base', 'bc'), ('ours', 'bc'), ('base', 'control'), ('ours', 'control')]

	def vals(tree: str, run: str, key: str) -> List[float]:
		return [m[run][key] / 1000 for m in raw['trace'][tree]
			if m.get(run) and isinstance(m[run].get(key), (int, float))]
	rows: List[List[str]] = []
	for key, label in (('p99_late', 'hrtimer lateness p99 (us)'),
			   ('tail_late', 'latest 5%: lateness (us)'),
			   ('tail_irq0', '  expiry time -> IRQ0 handler (us)'),
			   ('tail_vector', '  IRQ0 -> wake vector on the CPU (us)'),
			   ('tail_expiry', '  vector -> hrtimer expiry (us)'),
			   ('all_irq0', 'all: expiry time -> IRQ0 handler (us)'),
			   ('all_vector', 'all: IRQ0 -> wake vector (us)')):
		rows.append([label] + [cell(vals(t, r, key)) for t, r in cols])
	n = len(raw['trace']['base'])
	return table(f'== where the time goes: hpet-halt traced with the same events on both '
		     f'kernels, {n} boots each, median [min-max] ==', rows,
		     ['hop (hrtimer_wakeup sleeps)', 'base broadcast', 'ours broadcast',
		      'base control', 'ours control'])


def scaling_table(raw: Dict[str, Any]) -> str:
	rows: List[List[str]] = []
	for n in SCALING_SMP:
		b, o = raw['scaling'][n]['base'], raw['scaling'][n]['ours']
		row = [f'-smp {n}']
		for k in ('prof_tick_handle_oneshot_broadcast_ns', 'prof___tick_broadcast_oneshot_control_ns',
			  'bc_p99'):
			row += [cell(values(b, k)), cell(values(o, k)), ratio(values(o, k), values(b, k))]
		rows.append(row)
	nruns = len(raw['scaling'][SCALING_SMP[0]]['base'])
	return table(f'== expiry and enter/exit cost against vCPUs (hpet-halt, {nruns} runs '
		     'each) ==', rows,
		     ['vCPUs', 'expiry base (ns)', 'expiry ours (ns)', 'ratio',
		      'enter/exit base (ns)', 'enter/exit ours (ns)', 'ratio',
		      'p99 base (us)', 'p99 ours (us)', 'ratio'])


def coalesce_table(raw: Dict[Union[str, int], List[Figures]], runs: int,
		   arch: str = workspace.ARCH) -> str:
	"""One row per kernel and window; medians over the runs."""
	def v(col: Union[str, int], key: str, sub: bool = False) -> List[float]:
		out: List[float] = []
		for m in raw[col]:
			x = (m.get('coalesce') or {}).get(key) if sub else m.get(key)
			if isinstance(x, (int, float)):
				out.append(x)
		return out

	def c(x: Sequence[float], fmt: str = '{:.0f}') -> str:
		return fmt.format(med(x)) if x else 'n/a'
	base = {k: v('base', k) for k in ('irq0_per_100', 'loc_per_100', 'bc_p99')}
	rows: List[List[str]] = []
	for col in raw:
		ours = col != 'base'
		row = ['base' if not ours else f'W={col} us', c(v(col, 'irq0_per_s'))]
		for k in ('irq0_per_100', 'loc_per_100'):
			row += [c(v(col, k)), ratio(v(col, k), base[k]) if ours else '']
		row += [c(v(col, 'ipis_per_100')) if ours else 'n/a',
			c(v(col, 'early_per_100')) if ours else '',
			'/'.join(c(v(col, k, True)) for k in ('early_p50', 'early_p90', 'early_max'))
			if ours else '',
			c(v(col, 'too_early', True)) if ours else '',
			c(v(col, 'bc_p50')), c(v(col, 'bc_p99')),
			ratio(v(col, 'bc_p99'), base['bc_p99']) if ours else '',
			c(v(col, 'over_optimum', True), '{:.2f}x') if ours else 'n/a']
		rows.append(row)
	what = ('hpet-halt' if arch == 'x86_64' else
		'arm64-halt (bc irqs: the hrtimer device\'s bc_handler runs, no LOC)')
	return table(f'== coalescing: {what}, W by tick_broadcast_coalesce_us=, traced, '
		     f'deterministic, {runs} runs each, medians; per 100 = per 100 tbprobe sleeps ==',
		     rows,
		     ['kernel', 'bc irqs/s', 'bc irqs per 100', '/base', 'LOC per 100', '/base',
		      'wake IPIs per 100', 'early wakes per 100', 'early p50/p90/max (us)',
		      'early > W', 'late p50 (us)', 'late p99 (us)', 'p99/base', 'expiries/optimum'])


def core_table(raw: Dict[str, Any]) -> str:
	runs = [m['core_bench'] for m in raw['workloads']['hpet-halt']['ours'] if 'core_bench' in m]
	if not runs:
		return 'core microbenchmark: no results'
	rows: List[List[str]] = []
	for i, (n, _, _) in enumerate(runs[0]):
		e = [r[i][1] for r in runs if len(r) > i]
		s = [r[i][2] for r in runs if len(r) > i]
		rows.append([str(n), cell(e), cell(s), ratio(e, s)])
	return table('== core expiry with n sleeping CPUs, one expired (KUnit '
		     'tick_broadcast_core_bench, ns per call incl. the clock reads) ==', rows,
		     ['n', 'ours: core', 'upstream shape: scan', 'ours/scan'])


def plot(raw: Dict[str, Any], path: Path) -> str:
	try:
		import matplotlib
	except ImportError:
		# Debian's python3-matplotlib, seen from another python3 (pyenv).
		import sys
		sys.path.append('/usr/lib/python3/dist-packages')
	try:
		import matplotlib
		matplotlib.use('Agg')
		import matplotlib.pyplot as plt
	except ImportError:
		return 'no plot: python3-matplotlib is not installed'
	names = list(raw['workloads'])
	fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 4.5), squeeze=False)
	for ax, name in zip(axes[0], names):
		runs = raw['workloads'][name]
		curves = [('upstream, broadcast', [s for m in runs['base'] for s in m['raw']['bc']]),
			  ('ours, broadcast', [s for m in runs['ours'] for s in m['raw']['bc']]),
			  ('control, deep state off',
			   [s for t in TREES for m in runs[t] for s in m['raw']['control']])]
		if WORKLOADS[name].arat:
			curves.append(('control, ARAT same deep state',
				       [s for t in TREES for m in raw['arat'][name][t]
					for s in m['raw']['bc']]))
		for label, v in curves:
			if not v:
				continue
			v = sorted(max(x, 1) for x in v)
			ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=label)
		ax.set_xscale('log')
		ax.set_xlabel('timer lateness (us, log)')
		ax.set_ylabel('CDF')
		ax.set_title(name)
		ax.grid(True, which='both', alpha=0.3)
		ax.legend(loc='lower right', fontsize=8)
	fig.tight_layout()
	fig.savefig(path, dpi=100)
	return f'lateness CDFs: {path}'


def hold_bench_lock() -> Any:
	"""One bench at a time: each builds the trees and starts by emptying
	runs/bench, which would pull another's boot directories from under
	it. The lock goes with the returned file, closed at exit."""
	workspace.RUNS.mkdir(parents=True, exist_ok=True)
	f = open(workspace.RUNS / 'bench.lock', 'w')
	try:
		fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
	except BlockingIOError:
		f.close()
		raise SystemExit(f'bench: another bench is running (it holds {f.name})')
	return f


def cmd_bench(args: argparse.Namespace) -> None:
	t0 = time.time()
	lock = hold_bench_lock()	# held until the bench returns
	workspace.install_deps(depends={'/usr/lib/python3/dist-packages/matplotlib':
					'python3-matplotlib'})
	names = args.workloads.split(',') if args.workloads else list(WORKLOADS)
	part = getattr(args, 'part', 'all')
	unknown = [n for n in names if n not in WORKLOADS]
	if unknown:
		raise SystemExit(f'bench: unknown workload {", ".join(unknown)} '
				 f'(want some of {", ".join(WORKLOADS)})')
	if part == 'coalesce':
		# what the coalescing boots need built
		names = [n for n in names if n in ('hpet-halt', 'arm64-halt')] or ['hpet-halt']
	elif part == 'deterministic':
		names = [n for n in names if n in DET_WORKLOADS] or list(DET_WORKLOADS)
	elif part in ('storm', 'counts'):
		names = ['hpet-halt']
	storm = 'hpet-halt' in names and part in ('all', 'storm')
	count_sets = counts.COUNT_SETS if part in ('all', 'counts') else ()
	builds = {(WORKLOADS[n].arch, WORKLOADS[n].variant) for n in names}
	builds |= {(s.arch, s.variant) for s in count_sets}
	builds |= {('x86_64', storm_variant(n)) for n in STORM_SMP} if storm else set()
	for arch, variant in sorted(builds):
		for tree in TREES:
			workspace.build_or_die(tree, variant, arch=arch)
	built = time.time() - t0
	outroot = workspace.RUNS / 'bench'
	shutil.rmtree(outroot, ignore_errors=True)
	outroot.mkdir(parents=True)
	only = part != 'all'
	x86 = 'hpet-halt' in names
	# the coalescing boots of each architecture whose halt workload runs
	co_arches = [a for a, w in (('x86_64', 'hpet-halt'), ('arm64', 'arm64-halt'))
		     if w in names and part in ('all', 'coalesce')]
	det_names = [n for n in names if n in DET_WORKLOADS] if part in ('all', 'deterministic') else []
	nboots = args.runs * (len(COALESCE_W_US) + 1) * len(co_arches)
	nboots += storm * STORM_RUNS * len(STORM_SMP) * len(TREES)
	nboots += len(count_sets) * counts.COUNT_REPEAT * len(TREES)
	nboots += DET_RUNS * len(TREES) * sum(1 + WORKLOADS[n].arat for n in det_names)
	if not only:
		nboots += (args.runs * (len(names) + sum(WORKLOADS[n].arat for n in names) + x86)
			   + x86 * args.scaling_runs * len(SCALING_SMP)) * len(TREES)
	log(f'bench: {nboots} boots of 10 s to 3 minutes each; logs in {outroot}')
	raw = {} if only else run_all(outroot, args.runs, args.scaling_runs, names)
	for arch in co_arches:
		raw[f'coalesce-{arch}'] = run_coalesce(outroot, args.runs, arch)
	if det_names:
		raw['deterministic'] = run_deterministic(outroot, DET_RUNS, det_names)
	if storm:
		raw['storm'] = run_storm(outroot)
	count_raw = counts.run_counts(outroot, count_sets) if count_sets else {}
	raw['counts'] = {k: {t: [dataclasses.asdict(r) for r in rs] for t, rs in v.items()}
			 for k, v in count_raw.items()}
	(outroot / 'raw.json').write_text(json.dumps(raw, indent=1, default=str))
	parts = ['Only ratios within this one run count: the machine is shared and noisy,',
		 'and absolute figures drift between invocations. QEMU TCG, 2 host cores:',
		 'wall clock, except the tables marked deterministic (QEMU -icount).', '']
	if not only:
		for name in names:
			parts += [workload_table(name, raw), '']
		if x86:
			parts += [parts_table(raw), '', hops_table(raw), '', scaling_table(raw), '',
				  core_table(raw), '']
		parts += [plot(raw, outroot / 'lateness-cdf.png'), '']
	for arch in co_arches:
		parts += [coalesce_table(raw[f'coalesce-{arch}'], args.runs, arch), '']
	for name in det_names:
		parts += [deterministic_table(name, raw['deterministic']), '']
	if storm:
		parts += [storm_table(raw['storm']), '']
	if count_raw:
		parts += [counts.report(count_raw, count_sets), counts.costs_table(), '']
	parts.append(f'bench: {time.time() - t0:.0f} s (builds {built:.0f} s)')
	text = '\n'.join(parts)
	(outroot / 'bench.txt').write_text(text + '\n')
	print(text)
	print(f'\nbench: outputs in {outroot}: bench.txt (this report), raw.json, '
	      'lateness-cdf.png, one directory of logs per boot')
