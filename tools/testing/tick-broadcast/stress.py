# SPDX-License-Identifier: GPL-2.0
"""make stress: long runs that try to lose a wakeup, on ours and the base.

Each stress boot runs the lateness soak (tbprobe soak: every CPU sleeps
1-20 ms again and again, counting sleeps begun and completed) twice:
first with the deep state off under the same disturbance (the control:
the local timers work, nothing is broadcast), then with it on while the
disturbance runs:

  hotplug    random CPUs offline and online at random times, IRQ0 (the
             HPET broadcast interrupt) steered to the victim half of the
             time, several CPUs offline at once (guest/init hotplug-rand)
  s2idle     suspend to idle and back (tick_freeze: the broadcast device
             is suspended and resumed), woken by a key press from the host
  handover   the broadcast device replaced while CPUs sleep: two modules
             (guest/tb_bc_handover.c) take over from each other with
             rising ratings, the replaced one unloaded; refcounts checked
  soak       all of it mixed at random (guest/init mix) with the timer load

Verdicts per boot: it finished (no hang: the watchdog's rules), no splat
on the console, every soak sleep completed (wakeups == sleeps, no sleeper
stuck: a lost wakeup), the cycles asked for were done, deep idle was
entered, and, on kernels without debugging, no wakeup later than the
bounds derived from the control: p99 <= LAT_FACTOR[tree] x control p99
+ LAT_SLACK_US (the scenarios' bound) and the worst <= WORST_FACTOR x the
control's worst + WORST_SLACK_US (a CPU left asleep until an unrelated
interrupt: seconds; TCG's stop_machine for hotplug already costs the
control up to a second). Sleeps that spanned a suspend are left out of
the lateness (tbprobe: the task was frozen) and counted apart.

make check runs SHORT (one boot per kernel, a little of everything);
make stress runs FULL on both kernels, then SHORT on the debug kernels
(configs/debug.config: lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS_TIMERS,
KASAN) and on the KCSAN kernels (configs/kcsan.config). On KCSAN kernels
a data race report fails the row only if one of its two sides is in the
broadcast code; the others are counted as the kernel's own.
"""

import re
import argparse
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import guestdata
import qemu
import scenarios
import results
import workspace
from progress import Failed, log
from guestdata import Stats
from results import Check, Row, Status, expect_failure
from scenarios import Scenario

WORST_FACTOR = 3
WORST_SLACK_US = 1000000
# x86 only: the HPET broadcast, the i8042 key wakeup and the modules.
BASE = Scenario(arch='x86_64', bcdev='hpet', broadcast=True, flavour='halt',
		cmdline=['no_console_suspend'] + scenarios.timerstop('halt'))
# Steps per kind: (stress step, control step, seconds per unit for the
# timeout). Units: cycles, or seconds for mix.
KINDS = {
	'hotplug': ('hotplug-rand', 1.2),
	's2idle': ('s2idle', 12),
	'handover': ('handover', 1.0),
	'soak': ('mix', 1.6),
}
# (stress units, control units) per kind.
FULL = {'hotplug': (1000, 100), 's2idle': (50, 5), 'handover': (300, 30),
	'soak': (1200, 120)}
# make check: one boot doing a little of each.
SHORT = [('hotplug-rand', 30), ('handover', 10), ('s2idle', 2), ('mix', 20)]
SHORT_CONTROL = [('hotplug-rand', 10), ('handover', 4), ('mix', 10)]
# The base's own failure in the hand-over (reported as an expected failure,
# with the boot's failures, instead of failing make check and make stress).
BASE_REARMS_REPLACED = re.compile(r'tb_bc_handover_[ab]: unbind failed: -16')
BASE_REARMS_REPLACED_WHY = (
	'known failure of the base: a replaced broadcast device is armed again '
	'after the replacement (its interrupt, already running, waited for '
	'tick_broadcast_lock while the device was exchanged; the base\'s '
	'tick_handle_oneshot_broadcast() then re-arms the device it was called '
	'for, switching it from DETACHED back to ONESHOT), so it cannot be '
	'unregistered (clockevents_unbind_device(): -EBUSY) and is left on the '
	'clock event list when its module goes: the next CPU offline walks the '
	'list into the unloaded module (Oops in tick_cleanup_dead_cpu). Ours '
	'only ever arms the current device')
# The base's periodic broadcast handler, run for a device already
# switched to oneshot mode (the new device's first interrupt, while it is
# still being switched): it programs next_event + period with next_event
# KTIME_MAX, clockevents_program_event() refuses the negative time with a
# warning, the device stays unarmed (ours hands over to the oneshot expiry).
BASE_PERIODIC_LATE = re.compile(r'WARNING: .* at kernel/time/clockevents\.c:\d+ '
				r'clockevents_program_event(?:.*\n){1,20}?'
				r'.*tick_handle_periodic_broadcast\+')
BASE_PERIODIC_LATE_WHY = (
	'known failure of the base: the periodic broadcast handler ran for the '
	'new device after the switch to oneshot mode (next_event KTIME_MAX + '
	'period: clockevents_program_event() warns and leaves the device '
	'unarmed); ours hands such an interrupt over to the oneshot expiry')
KCSAN_RACE = re.compile(r'BUG: KCSAN: data-race in (\S+) / (\S+)')
OURS_CODE = re.compile(r'tick_broadcast|tick_bc|tick_handle_(periodic|oneshot)_broadcast|'
		       r'bc_dev|bc_req|tick_receive_broadcast|tb_bc_handover')


@dataclass
class Summary:
	"""What one stress boot measured, for the table (table()).

	races		KCSAN data race reports
	splats		splat lines on the console (None: the boot did not run)
	control		the soak's figures over all CPUs, of the control run and
	stress		of the stress run ({}: the guest reported none)
	mix		the mix step's counts ({}: none)
	cycles		{step: cycles done} of the other steps
	bound		the bounds of p99 and of the worst wakeup (None: none,
	worst_bound	on a debug kernel or without both runs' figures)
	secs		how long the boot took
	"""
	races: int = 0
	splats: Optional[int] = None
	control: Stats = field(default_factory=dict)
	stress: Stats = field(default_factory=dict)
	mix: Dict[str, str] = field(default_factory=dict)
	cycles: Dict[str, int] = field(default_factory=dict)
	bound: Optional[float] = None
	worst_bound: Optional[float] = None
	secs: float = 0.0


def _plan(steps: Sequence[Tuple[str, int]], control: Sequence[Tuple[str, int]]) -> List[str]:
	"""The soak under the control disturbance with deep idle off, then under
	steps with it on; snapshots around the second (deep entries)."""
	ctl = [f'{s}:{n}' for s, n in control]
	return (['deep:off', 'soak:start:control'] + ctl + ['soak:stop', 'snap:mid', 'deep:on',
	       'soak:start:stress'] + [f'{s}:{n}' for s, n in steps] +
		['soak:stop', 'snap:end'])


def stress_scenario(kind: str, scale: float = 1.0) -> Scenario:
	"""The scenario of one stress kind ('short': the make check boot)."""
	if kind == 'short':
		steps, control = SHORT, SHORT_CONTROL
		secs = 200.0
	else:
		step, per = KINDS[kind]
		n, c = FULL[kind]
		n, c = max(1, int(n * scale)), max(1, int(c * scale))
		steps, control = [(step, n)], [(step, c)]
		secs = 120 + (n + c) * per + (120 if kind == 'soak' else 0)
	return replace(BASE, kind=kind, steps=steps, control=control, plan=_plan(steps, control),
		       timeout=int(secs))


def _race_rows(console: str) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]]]:
	races = KCSAN_RACE.findall(console)
	ours = [r for r in races if OURS_CODE.search(r[0]) or OURS_CODE.search(r[1])]
	return races, ours


def verdict(sc: Scenario, status: str, console: str, data: str, timing: bool = True,
	    variant: str = '', tree: str = 'ours') -> Tuple[List[Check], Summary]:
	"""([Check], Summary) of one stress boot."""
	res = guestdata.parse(data)
	checks = [Check('finished', status == 'done' and res.end, f'guest status: {status}')]
	races, ours_races = _race_rows(console)
	lines = scenarios.splat_lines(console)
	splats = [ln for ln in lines if 'KCSAN: data-race' not in ln] if variant == 'kcsan' \
		else lines
	checks.append(Check('splats', not splats, '; '.join(splats[:3]) or 'none'))
	if variant == 'kcsan':
		checks.append(Check('races', not ours_races,
				    f'{len(races)} KCSAN data race reports, {len(ours_races)} '
				    'in the broadcast code' +
				    (f': {ours_races[:3]}' if ours_races else '')))
	errors = res.errors + res.handover_errors
	checks.append(Check('errors', not res.errors and not res.handover_errors,
			    '; '.join(errors[:3]) or 'none'))
	soak = res.soak
	s = Summary(races=len(races), splats=len(splats))
	for run in ('control', 'stress'):
		a = soak.get(run, {}).get('all')
		checks.append(scenarios.soak_check(res, run, f'{run}-wakeups'))
		if not a:
			continue
		if run == 'control':
			s.control = a
		else:
			s.stress = a
	# Each step reports as "@@stress STEP:N ..." (the stress run's after
	# the control's), s2idle as "@@s2idle ... ok=".
	st = res.stress
	count = {'hotplug-rand': 'hotplug', 'handover': 'handover'}
	for step, n in sc.steps:
		kv = st.get(f'{step}:{n}', {})
		if step == 'mix':
			s.mix = kv
			checks.append(Check('mix', bool(kv) and int(kv.get('hotplug', 0)) > 0 and
					    int(kv.get('handover', 0)) > 0,
					    f'mixed {kv.get("hotplug", 0)} hotplug, '
					    f'{kv.get("handover", 0)} hand-over, '
					    f'{kv.get("s2idle_ok", 0)}/{kv.get("s2idle", 0)} '
					    f'suspend cycles' if kv else 'no mix counts'))
			continue
		done = (int(res.s2idle.get('ok', 0)) if step == 's2idle'
			else int(kv.get(count[step], 0)))
		s.cycles[step] = done
		checks.append(Check(step, done >= n, f'{done} cycles, want {n}'))
	snaps = res.snaps
	if 'mid' in snaps and 'end' in snaps:
		deep = guestdata.deep_entries(snaps['mid'], snaps['end'])
		total = sum(max(0, v) for v in deep.values())
		checks.append(Check('deep', total >= scenarios.MIN_DEEP,
				    f'{total} deep entries during the stress, '
				    f'want >= {scenarios.MIN_DEEP}'))
	else:
		checks.append(Check('deep', False, 'no snapshots'))
	if timing and s.control and s.stress:
		c, b = s.control, s.stress
		bound = scenarios.lateness_bound(tree, c['p99'])
		worst = WORST_FACTOR * c['max'] + WORST_SLACK_US
		s.bound, s.worst_bound = bound, worst
		checks.append(Check('lateness', b['p99'] <= bound,
				    f'p99 {b["p99"]:.0f} us, bound {bound:.0f} (control p99 '
				    f'{c["p99"]:.0f})'))
		checks.append(Check('worst', b['max'] <= worst,
				    f'worst {b["max"]:.0f} us, bound {worst:.0f} = '
				    f'{WORST_FACTOR} x control worst {c["max"]:.0f} + '
				    f'{WORST_SLACK_US}'))
	return checks, s


def known_failure(tree: str, console: str) -> Optional[str]:
	"""Why a boot of tree is a known failure of the base (its console
	shows the signature), or None."""
	if tree != 'base':
		return None
	why = [w for r, w in ((BASE_REARMS_REPLACED, BASE_REARMS_REPLACED_WHY),
			      (BASE_PERIODIC_LATE, BASE_PERIODIC_LATE_WHY)) if r.search(console)]
	return '; '.join(why) or None


def run(kind: str, tree: str, outroot: Path, variant: str = '', scale: float = 1.0,
	seed: int = 1) -> Row[Summary]:
	"""Boot one stress kind on tree[-variant]; return its row (with the
	output directory and the summary), a known failure of the base
	expected (results.expect_failure())."""
	sc = stress_scenario(kind, scale)
	if variant:
		# lockdep with KASAN or KCSAN: several times slower under TCG
		sc.timeout *= 4
	label = f'{kind}-{variant}' if variant else kind
	row = f'stress/{label}/{tree}'
	out = outroot / f'{label}-{tree}'
	shutil.rmtree(out, ignore_errors=True)
	out.mkdir(parents=True)
	try:
		files = workspace.build_modules(tree, variant)
	except Failed as e:
		return Row(row, Status.FAIL, str(e), out, Summary())
	kernel = workspace.kernel_image(tree, variant)
	b = qemu.boot(qemu.Boot(kernel=kernel, plan=sc.plan, outdir=out, cmdline=sc.cmdline,
				timeout=sc.timeout, seed=seed, what=row, arch=sc.arch,
				files=files))
	status, con, data, secs = b.status, b.console, b.data, b.secs
	checks, s = verdict(sc, status, con, data, timing=not variant, variant=variant,
			   tree=tree)
	s.secs = secs
	text = '\n'.join(f'{"ok  " if c.ok else "FAIL"} {c.name}: {c.detail}' for c in checks)
	(out / 'report.txt').write_text(f'{row}: {status} in {secs:.0f} s\n{text}\n')
	bad = [f'{c.name}: {c.detail}' for c in checks if not c.ok]
	return expect_failure(Row(row, Status.of(not bad), '; '.join(bad) or f'{secs:.0f} s',
				  out, s), known_failure(tree, con) or '')


def table(rows: Sequence[Row[Summary]]) -> str:
	"""The note's table: one line per stress boot."""
	out = ['| boot | result | cycles | sleeps / wakeups (stuck) | p99 / worst (us) '
	       '| bounds p99 / worst (us) | splats | time |',
	       '|---|---|---|---|---|---|---|---|']
	for row in rows:
		s = row.metrics or Summary()
		b = s.stress
		cycles = [f'{k} {v}' for k, v in s.cycles.items()]
		if s.mix:
			m = s.mix
			cycles.append(f'mix: hotplug {m.get("hotplug")}, '
				      f'handover {m.get("handover")}, s2idle {m.get("s2idle_ok")}')
		cyc = '; '.join(cycles)
		sl = (f'{b["sleeps"]:.0f} / {b["wakeups"]:.0f} ({b["stuck"]:.0f})' if b else '-')
		lat = f'{b["p99"]:.0f} / {b["max"]:.0f}' if b else '-'
		bounds = (f'{s.bound:.0f} / {s.worst_bound:.0f}'
			  if s.bound is not None and s.worst_bound is not None else 'none')
		spl = ('-' if s.splats is None else f'{s.splats}') + (
			f' (+{s.races} races)' if s.races else '')
		out.append(f'| {row.name} | {row.status.value} | {cyc} | {sl} | {lat} | {bounds} '
			   f'| {spl} | {s.secs:.0f} s |')
	return '\n'.join(out)


def cmd_stress(args: argparse.Namespace) -> None:
	"""make stress: FULL kinds on both kernels, then SHORT on the debug and
	KCSAN kernels; prints the rows and the table."""
	t0 = time.time()
	outroot = workspace.RUNS / 'stress'
	kinds = args.kinds.split(',') if args.kinds else list(FULL)
	variants = args.variants.split(',') if args.variants is not None else ['', 'debug', 'kcsan']
	trees = args.trees.split(',') if args.trees else list(workspace.TREES)
	rows: List[Row[Summary]] = []
	for variant in variants:
		for tree in trees:
			try:
				workspace.build(tree, variant, prepare=not args.no_prepare)
			except Failed as e:
				rows.append(Row(f'build/{workspace.label(tree, variant)}',
						Status.FAIL, str(e), None, Summary()))
				continue
			# the variants run the short boot unless kinds were named
			long = args.kinds or not variant
			for kind in (kinds if long and not args.short else ['short']):
				log(f'stress: {kind} on {workspace.label(tree, variant)}')
				r = run(kind, tree, outroot, variant, args.scale, args.seed)
				results.print_rows([r])
				rows.append(r)
	print('\n' + table([r for r in rows if r.outdir is not None]))
	print(f'\nstress took {time.time() - t0:.0f} s; reports in {outroot}/<kind>-<tree>/')
	print(results.summary(rows))
	raise SystemExit(results.exit_status(rows))
