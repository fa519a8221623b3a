# SPDX-License-Identifier: GPL-2.0
"""make bench PART=counts: what the broadcast costs, counted, not timed.

Each kernel is booted under QEMU -icount with plugin/tbcount.c, a TCG
plugin that counts guest instructions and device accesses while the
guest's lateness run (or storm) has every CPU sleeping on the broadcast.
Nothing in the kernel changes: the plugin is given the addresses of a
few functions from the build's System.map (config()). It counts

  - per operation: the enter and the exit (tick_broadcast_oneshot_control()
    from its two call sites in cpuidle_enter_state()) and the expiry
    (tick_handle_oneshot_broadcast(), the broadcast device's handler on
    both kernels): calls and everything each executes until it returns,
    callees included;
  - the parts of them that are not the broadcast's own work, counted
    apart where an operation calls them (PARTS): the local tick handler
    the expiry runs for its own CPU, sending the wake IPIs, programming
    or switching a device (the broadcast's or a local one); "own" is the
    rest, the part a different broadcast design could change;
  - the serial part: instructions executed under tick_broadcast_lock,
    from the store that takes its lock word to the one that releases it;
    waiting for it (queued_spin_lock_slowpath) is counted apart;
  - device accesses: guest-physical reads and writes of the HPET and of
    the local APIC's timer and interrupt-command registers (x86; the
    arm64 timer and GIC are system registers, counted by function below);
  - calls of named functions: clock reads, device programming, IPIs,
    hrtimer starts and cancels.

The counts are the same on every run of the same kernel and seed, which
make bench checks (two boots each). They price every instruction and
access alike; model() turns them into time with per-access costs of real
hardware (COSTS, with their sources).
"""

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import guestdata
import qemu
import scenarios
import workspace
from arches import ARCHES
from progress import log

PLUGIN_SRC = workspace.TOOLS / 'plugin' / 'tbcount.c'

OPS = {'oneshot_control': 'tick_broadcast_oneshot_control',
       'expiry': 'tick_handle_oneshot_broadcast'}
# the parts of an operation that are not the broadcast's own work, the
# same on both kernels' side of the API: counted apart (sub:NAME) where an
# operation calls them, and left out of its "own" rows. A part must not
# take tick_broadcast_lock (the plugin ends a lock section taken inside a
# frame when the frame returns).
PARTS: Dict[str, List[Tuple[str, str]]] = {
	arch: [('local_tick', 'hrtimer_interrupt'), ('wake_ipis', ipis),
	       ('dev_program', 'clockevents_program_event'),
	       ('dev_program', 'clockevents_switch_state')]
	for arch, ipis in (('x86_64', 'lapic_timer_broadcast'), ('arm64', 'tick_broadcast'))}
# their rows' keys, as parse() reads them
SUB_KEYS = tuple(dict.fromkeys(f'sub:{name.replace("_", " ")}' for name, _ in PARTS['x86_64']))
LOCK_VAR = 'tick_broadcast_lock'
# the spinlock's slow path: waiting for the lock
WAIT = 'queued_spin_lock_slowpath'
# the function whose entry ends a phase: the guest's snap step reads the
# broadcast device's sysfs current_device once, and nothing else does
MARKER = 'current_device_show'

# counted functions: (label, symbol)
FNS: Dict[str, List[Tuple[str, str]]] = {
	'x86_64': [('clock read', 'ktime_get'), ('HPET program', 'hpet_clkevt_set_next_event'),
		   ('local timer program', 'lapic_next_event'),
		   ('wake IPI', 'lapic_timer_broadcast')],
	'arm64': [('clock read', 'ktime_get'), ('hrtimer start', 'hrtimer_start_range_ns'),
		  ('hrtimer cancel', 'hrtimer_try_to_cancel'),
		  ('local timer program', 'arch_timer_set_next_event_virt'),
		  ('wake IPI', 'tick_broadcast'), ('IPI send', 'gic_ipi_send_mask')],
}
# guest-physical ranges (name, lo, hi); a name may have several
MMIO: Dict[str, List[Tuple[str, int, int]]] = {
	'x86_64': [('HPET counter', 0xfed000f0, 0xfed000f8), ('HPET', 0xfed00000, 0xfed00400),
		   ('LAPIC timer', 0xfee00320, 0xfee00330), ('LAPIC timer', 0xfee00380, 0xfee003f0),
		   ('LAPIC ICR', 0xfee00300, 0xfee00304)],
	'arm64': [],
}

# the guest's wall clock from the virtual clock, not the host's
RTC = ('-rtc', 'base=2024-01-01T00:00:00,clock=vm')
PLAN_LAT = ['deep:on', 'snap:mid', 'lat:bc:{n}', 'snap:end']
PLAN_STORM = ['deep:on', 'snap:mid', 'storm:bc:{n}', 'snap:end']


def plugin() -> Path:
	"""tbcount.so, built from PLUGIN_SRC when stale."""
	so = workspace.CACHE / 'plugin' / 'tbcount.so'
	if not so.exists() or so.stat().st_mtime < PLUGIN_SRC.stat().st_mtime:
		so.parent.mkdir(parents=True, exist_ok=True)
		subprocess.run(['gcc', '-O2', '-Wall', '-Wextra', '-Werror', '-fPIC', '-shared',
				'-fvisibility=hidden', '-o', str(so), str(PLUGIN_SRC)], check=True)
	return so


def symbols(vmlinux: Path, nm: str = 'nm') -> Dict[str, List[Tuple[int, int]]]:
	"""{name: [(address, size)...]} of vmlinux's text symbols, and where
	the text starts and ends."""
	out = subprocess.run([nm, '-S', '--defined-only', str(vmlinux)], check=True,
			     capture_output=True, text=True).stdout
	syms: Dict[str, List[Tuple[int, int]]] = {}
	for line in out.splitlines():
		f = line.split()
		if f and f[-1] in ('_stext', '_etext', LOCK_VAR):	# _etext is data on arm64
			syms[f[-1]] = [(int(f[0], 16), 0)]
		elif len(f) == 4 and f[2] in 'tTW':
			syms.setdefault(f[3], []).append((int(f[0], 16), int(f[1], 16)))
		elif len(f) == 3 and f[1] in 'tTW':
			syms.setdefault(f[2], []).append((int(f[0], 16), 0))
	return syms


def one(syms: Dict[str, List[Tuple[int, int]]], name: str) -> int:
	v = syms.get(name)
	if not v:
		raise SystemExit(f'counts: {name} is not a symbol of this kernel')
	return v[0][0]


def config(syms: Dict[str, List[Tuple[int, int]]], arch: str) -> str:
	"""The plugin's configuration for a kernel of symbols syms (plugin/tbcount.c)."""
	lines = [f'arch {arch}',
		 f'kernel {one(syms, "_stext"):x} {one(syms, "_etext"):x}',
		 f'lockvar {one(syms, LOCK_VAR):x}', f'wait {one(syms, WAIT):x}']
	lines += [f'op {k} {one(syms, v):x}' for k, v in OPS.items()]
	lines += [f'part {k} {one(syms, v):x}' for k, v in PARTS[arch]]
	# a counted function the kernel lacks (another GIC driver, say) is
	# left out: its rows show nothing
	lines += [f'fn {label.replace(" ", "_")} {syms[s][0][0]:x}' for label, s in FNS[arch]
		  if s in syms]
	lines += [f'mmio {n.replace(" ", "_")} {lo:x} {hi:x}' for n, lo, hi in MMIO[arch]]
	lines.append(f'marker {one(syms, MARKER):x}')
	return '\n'.join(lines) + '\n'


# ---------------------------------------------------------------- output

Counts = Dict[str, int]


@dataclass
class Phase:
	"""One phase of the plugin's output: scope -> counts. Scopes: total;
	op NAME SITE (an operation's calls from one site), lock NAME SITE and
	wait NAME SITE (the lock sections under it, its waits for the lock);
	lock - and wait - (those outside any operation)."""
	scopes: Dict[str, Counts]
	overflow: int


def parse(text: str) -> List[Phase]:
	phases: List[Phase] = []
	cur: Optional[Phase] = None
	for line in text.splitlines():
		m = re.match(r'phase (\d+) overflow=(\d+)', line)
		if m:
			cur = Phase({}, int(m.group(2)))
			phases.append(cur)
			continue
		if cur is None or line.startswith('end '):
			continue
		words = line.split()
		i = next((k for k, w in enumerate(words) if w.startswith('calls=')), None)
		if i is None:		# cut short: QEMU ended mid-line
			continue
		scope = ' '.join(words[:i])
		c: Counts = {}
		for w in words[i:]:
			k, v = w.rsplit('=', 1)
			k = k.replace('_', ' ')
			c[k] = c.get(k, 0) + int(v)
		cur.scopes[scope] = c
	return phases


def owner(syms: Dict[str, List[Tuple[int, int]]], addr: int) -> Tuple[str, int]:
	"""The function holding addr, and where it starts."""
	for name, v in syms.items():
		for a, sz in v:
			if a <= addr < a + sz:
				return name, a
	return f'{addr:#x}', addr


# The state argument of tick_broadcast_oneshot_control() at a call site:
# TICK_BROADCAST_EXIT is 0, TICK_BROADCAST_ENTER 1.
ARG_SET = {'x86_64': (r'mov\s+\$0x1,%edi', r'xor\s+%edi,%edi|mov\s+\$0x0,%edi'),
	   'arm64': (r'mov\s+w0,\s*#0x1', r'mov\s+w0,\s*(#0x0|wzr)')}


def control_kind(vmlinux: Path, syms: Dict[str, List[Tuple[int, int]]], ret: int,
		 arch: str) -> str:
	"""'enter' or 'exit': what the call ending at ret asks for, from the
	last instruction before it that sets the argument register (the
	function disassembled from its start: x86 cannot be decoded from the
	middle)."""
	_, start = owner(syms, ret)
	text = subprocess.run([f'{ARCHES[arch].cross}objdump', '-d', '--no-show-raw-insn',
			       f'--start-address={start:#x}', f'--stop-address={ret:#x}',
			       str(vmlinux)], check=True, capture_output=True, text=True).stdout
	enter, exit_ = ARG_SET[arch]
	for line in reversed(text.splitlines()):
		if re.search(enter, line):
			return 'enter'
		if re.search(exit_, line):
			return 'exit'
	return f'call site {ret:#x}'


OP_ROWS = ('enter', 'exit', 'expiry')


def operations(ph: Phase, vmlinux: Path, syms: Dict[str, List[Tuple[int, int]]],
	       arch: str) -> Dict[str, Tuple[Counts, Counts]]:
	"""{enter|exit|expiry|other: (its counts, its lock sections' counts)},
	the call sites of one kind added up; its waits for the lock are in
	its counts as wait:calls and wait:insns."""
	ops: Dict[str, Tuple[Counts, Counts]] = {}
	kinds: Dict[int, str] = {}
	for scope, c in ph.scopes.items():
		m = re.match(r'op (\S+) (\S+)', scope)
		if not m:
			continue
		name, site = m.group(1), int(m.group(2), 16)
		if name not in OPS:
			continue	# a part: in its callers' sub: counts
		if name == 'expiry':
			kind = 'expiry'
		elif site == (1 << 64) - 1:
			kind = 'other'
		else:
			kind = kinds.setdefault(site, control_kind(vmlinux, syms, site, arch))
		c = dict(c)
		for k, v in ph.scopes.get(f'wait {name} {m.group(2)}', {}).items():
			if k in ('calls', 'insns'):
				c[f'wait:{k}'] = v
		lock = ph.scopes.get(f'lock {name} {m.group(2)}', {})
		if kind in ops:
			a, b = ops[kind]
			c = {k: a.get(k, 0) + c.get(k, 0) for k in set(a) | set(c)}
			lock = {k: b.get(k, 0) + lock.get(k, 0) for k in set(b) | set(lock)}
		ops[kind] = (c, lock)
	return ops


@dataclass
class Run:
	"""One counted boot: the measured phase's operations, its totals, the
	lock sections outside any operation, and the timers' lateness in the
	same run (us: p50, p99; of the last CPU out of each round in the
	storm): how many wakeups one expiry serves depends on it. min_delta:
	the broadcast device's minimum delta (us) at the end of the boot,
	0 if the kernel never raised it (min_delta_us())."""
	status: str
	ops: Dict[str, Tuple[Counts, Counts]]
	total: Counts
	nolock: Counts
	overflow: int
	lateness: Tuple[float, float] = (0.0, 0.0)
	min_delta: float = 0.0


def min_delta_us(console: str) -> float:
	"""The last minimum delta (us) the kernel raised a clock event device's
	to, 0 for none. Under TCG an HPET write often lands after its time,
	when other vCPUs ran in between; after repeated misses
	clockevents_program_min_delta() raises the delta for good, and every
	later arming in the past waits that long: lateness follows it."""
	found = re.findall(r'increased min_delta_ns to (\d+) nsec', console)
	return int(found[-1]) / 1000 if found else 0.0


def nested(ops: Dict[str, Tuple[Counts, Counts]], ph: Optional[Phase] = None) -> str:
	"""'' if no operation ran inside another and no part took the lock,
	else what did where. The broadcast never calls one operation from
	another, nor from a part (PARTS): one inside another means the plugin
	missed a return and kept the outer one open, which then counted what
	ran after it (an interrupt, the idle loop). A part that took the lock
	would have ended its lock section when it returned."""
	# the parts' scopes: (kind, part's name, counts)
	parts = [(w[0], w[1], c) for w, c in ((k.split(), c) for k, c in
					       (ph.scopes.items() if ph else []))
		 if w[0] in ('op', 'lock') and w[1] not in OPS and w[1] != '-']
	outers = [(k, v[0]) for k, v in ops.items()] + [(n, c) for kind, n, c in parts
							  if kind == 'op']
	found = [f'{inner} in {outer}' for outer, c in outers
		 for inner in OPS if c.get(f'sub:{inner.replace("_", " ")}')]
	found += [f'the lock taken in {n}' for kind, n, c in parts if kind == 'lock' and c.get('calls')]
	return f'; operations counted inside others (a return missed): {found}' if found else ''


def count_boot(tree: str, arch: str, smp: int, storm: bool, outroot: Path, seed: int = 1,
	       n: int = 0, run: int = 0, variant: str = '') -> Run:
	"""One boot of tree under ICOUNT with the plugin: the lateness run
	(storm: the storm) of n sleeps (rounds) per CPU on every CPU, counted
	from snap:mid to snap:end."""
	label = f'counts-{tree}-{arch}-smp{smp}-{"storm" if storm else "lat"}-{run}'
	out = outroot / label
	shutil.rmtree(out, ignore_errors=True)
	out.mkdir(parents=True)
	vmlinux = workspace.tree_dir(tree) / workspace.build_dir_name(variant, arch) / 'vmlinux'
	syms = symbols(vmlinux, f'{ARCHES[arch].cross}nm')
	(out / 'tbcount.cfg').write_text(config(syms, arch))
	n = n or 100
	plan = [s.format(n=n) for s in (PLAN_STORM if storm else PLAN_LAT)]
	b = qemu.boot(qemu.Boot(
		kernel=workspace.kernel_image(tree, variant, arch), plan=plan, outdir=out,
		cmdline=scenarios.timerstop('halt') + ['nokaslr'], smp=smp,
		qemu=list(scenarios.ICOUNT) + list(RTC) + ['-plugin', f'{plugin()},cfg={out / "tbcount.cfg"},'
						       f'out={out / "counts.txt"}'],
		timeout=1800, seed=seed, what=f'bench {label}', arch=arch))
	text = (out / 'counts.txt').read_text() if (out / 'counts.txt').exists() else ''
	phases = parse(text)
	if len(phases) != 3:	# before snap:mid, up to snap:end, after
		return Run(f'{b.status}; {len(phases)} phases counted, want 3', {}, {}, {}, 0)
	ph = phases[1]
	ops = operations(ph, vmlinux, syms, arch)
	status = b.status
	odd = [k for k in ops if k not in OP_ROWS]
	if odd or ph.overflow:
		# a call site not told apart, frames that did not fit: the rows lie
		status += f'; not counted right: sites {odd}, overflow {ph.overflow}'
	status += nested(ops, ph)
	lat = guestdata.parse(b.data).lat.get('bc', {}).get('last' if storm else 'all', {})
	console = out / 'console.log'
	return Run(status, ops, ph.scopes.get('total', {}), ph.scopes.get('lock -', {}),
		   ph.overflow, (lat.get('p50', 0.0), lat.get('p99', 0.0)),
		   min_delta_us(console.read_text(errors='replace')) if console.exists() else 0.0)


# ---------------------------------------------------------------- tables

# what a row shows: (label, key); key "serial" is the lock scope's insns
METRICS = [('instructions', 'insns'),
	   ('instructions in the local tick handler', 'sub:local tick'),
	   ('instructions sending wake IPIs', 'sub:wake ipis'),
	   ('instructions programming or switching a device', 'sub:dev program'),
	   ('own instructions (the rest)', 'own'),
	   ('serial instructions (under the lock)', 'serial'),
	   ('serial own instructions (the rest)', 'serial-own'),
	   ('lock sections', 'locks'), ('clock reads (ktime_get)', 'fn:clock read'),
	   ('HPET counter reads', 'rd:HPET counter'), ('HPET other reads', 'rd:HPET'),
	   ('HPET writes', 'wr:HPET'), ('HPET programs', 'fn:HPET program'),
	   ('local timer writes', 'wr:LAPIC timer'), ('local timer programs', 'fn:local timer program'),
	   ('IPIs (ICR writes)', 'wr:LAPIC ICR'), ('wake IPI calls', 'fn:wake IPI'),
	   ('IPI sends', 'fn:IPI send'), ('hrtimer starts', 'fn:hrtimer start'),
	   ('hrtimer cancels', 'fn:hrtimer cancel'),
	   ('device accesses under the lock', 'serial-dev'),
	   ('lock waits (slow path)', 'wait:calls'),
	   ('instructions waiting for the lock', 'wait:insns')]
DEVICE_KEYS = ('rd:HPET counter', 'rd:HPET', 'wr:HPET', 'wr:LAPIC timer', 'wr:LAPIC ICR')


def metric(c: Counts, lock: Counts, key: str) -> int:
	if key == 'serial':
		return lock.get('insns', 0)
	if key == 'own':
		return c.get('insns', 0) - sum(c.get(k, 0) for k in SUB_KEYS)
	if key == 'serial-own':
		return lock.get('insns', 0) - sum(lock.get(k, 0) for k in SUB_KEYS)
	if key == 'locks':
		return lock.get('calls', 0)
	if key == 'serial-dev':
		return sum(lock.get(k, 0) for k in DEVICE_KEYS)
	return c.get(key, 0)


def wakeup_counts(r: Run) -> Tuple[Counts, Counts]:
	"""All operations added up (what the broadcast did), and the lock
	sections, those outside any operation included."""
	c: Counts = {}
	lock: Counts = {}
	for a, b in list(r.ops.values()) + [({}, r.nolock)]:
		for k, v in a.items():
			c[k] = c.get(k, 0) + v
		for k, v in b.items():
			lock[k] = lock.get(k, 0) + v
	return c, lock


def rows_of(r: Run) -> Dict[Tuple[str, str], float]:
	"""{(operation or 'per wakeup', metric label): count per call}."""
	out: Dict[Tuple[str, str], float] = {}
	exits = r.ops.get('exit', ({}, {}))[0].get('calls', 0)
	for op in OP_ROWS + ('per wakeup',):
		if op == 'per wakeup':
			(c, lock), n = wakeup_counts(r), exits
		else:
			(c, lock), n = r.ops.get(op, ({}, {})), r.ops.get(op, ({}, {}))[0].get('calls', 0)
		out[(op, 'calls')] = n if op != 'per wakeup' else exits
		for label, key in METRICS:
			v = metric(c, lock, key)
			if n and (v or key in ('insns', 'serial', 'own', 'serial-own')):
				out[(op, label)] = v / n
	if exits:
		out[('per wakeup', 'expiries')] = r.ops.get('expiry', ({}, {}))[0].get('calls', 0) / exits
	out[('lateness', 'p50 (us)')], out[('lateness', 'p99 (us)')] = r.lateness
	out[('lateness', 'device min_delta at the end (us)')] = r.min_delta
	return out


CHECKED = ('fn:HPET program', 'fn:wake IPI')


def check(r: Run) -> str:
	c, _ = wakeup_counts(r)
	return ', '.join(f'{k.split(":")[1]} {c.get(k, 0)}/{r.total.get(k, 0)}'
			 for k in CHECKED if r.total.get(k))


def fmt(v: Optional[float]) -> str:
	if v is None:
		return '-'
	return f'{v:.0f}' if v >= 100 or v == int(v) else f'{v:.2f}'


def counts_table(title: str, runs: Dict[str, List[Run]]) -> str:
	"""runs: {tree: [Run, Run]} (two identical boots each)."""
	lines = [title, '']
	same = []
	for tree, rs in runs.items():
		ok = len(rs) >= 2 and all(rows_of(r) == rows_of(rs[0]) for r in rs[1:])
		same.append(f'{tree} {"identical" if ok else "DIFFER"} over {len(rs)} boots')
		for r in rs:
			if r.overflow or not r.ops or 'a return missed' in r.status:
				same.append(f'{tree}: {r.status}, overflow {r.overflow}')
	lines.append('repeat: ' + ', '.join(same))
	lines.append('inside the operations, of all in the phase (a check of the call-depth '
		     'tracking: the broadcast calls these only from them): ' + '; '.join(
			     f'{t} {check(rs[0])}' for t, rs in runs.items() if rs))
	first = {t: rows_of(rs[0]) if rs else {} for t, rs in runs.items()}
	keys: List[Tuple[str, str]] = []
	for rows in first.values():
		keys += [k for k in rows if k not in keys]
	order = {op: i for i, op in enumerate(OP_ROWS + ('per wakeup', 'lateness'))}
	labels = (['calls'] + [m[0] for m in METRICS] +
		  ['expiries', 'p50 (us)', 'p99 (us)', 'device min_delta at the end (us)'])
	keys.sort(key=lambda k: (order[k[0]], labels.index(k[1])))
	w = max(len(f'{a}: {b}') for a, b in keys) if keys else 20
	trees = list(runs)
	lines.append(f'| {"per call":<{w}} | ' + ' | '.join(f'{t:>8}' for t in trees) +
		     ' | ours/base |')
	lines.append(f'|{"-" * (w + 2)}|' + '|'.join('-' * 10 for _ in trees) + '|-----------|')
	for k in keys:
		vals = [first[t].get(k) for t in trees]
		b, o = first.get('base', {}).get(k), first.get('ours', {}).get(k)
		q = f'{o / b:.2f}' if b and o is not None and k[1] != 'calls' else ''
		lines.append(f'| {f"{k[0]}: {k[1]}":<{w}} | ' + ' | '.join(f'{fmt(v):>8}' for v in vals) +
			     f' | {q:>9} |')
	return '\n'.join(lines)


# ---------------------------------------------------------------- bench part

@dataclass(frozen=True)
class CountSet:
	"""One table: arch, vCPUs, the storm or the lateness run, its length,
	the kernel variant (cpus64: NR_CPUS=64)."""
	arch: str
	smp: int
	storm: bool
	n: int
	variant: str = ''

	def title(self) -> str:
		dev = 'HPET' if self.arch == 'x86_64' else 'hrtimer (arm64)'
		what = (f'storm, {self.n} rounds: every CPU sleeps to the same deadline' if self.storm
			else f'{self.n} sleeps of 1-20 ms per CPU at random deadlines')
		return (f'== counts: {dev} broadcast, {self.smp} vCPUs, {what}; deterministic '
			'(-icount), per call of each operation and per wakeup (deep-idle exit) ==')

	def label(self) -> str:
		return f'{self.arch}-smp{self.smp}-{"storm" if self.storm else "lat"}'


CPUS64 = 'cpus64'	# the kernel variant with NR_CPUS=64 (configs/cpus64.config)
COUNT_SETS = (CountSet('x86_64', 4, False, 100), CountSet('x86_64', 16, False, 50),
	      CountSet('x86_64', 16, True, 100), CountSet('x86_64', 64, False, 20, CPUS64),
	      # 64 sleepers due together: each expiry wakes many of them at
	      # once on both kernels (26 to 30 measured), where at random
	      # deadlines it wakes a few, as many as the HPET's raised
	      # minimum delta lets pile up (Run.min_delta)
	      CountSet('x86_64', 64, True, 20, CPUS64),
	      CountSet('arm64', 4, False, 100), CountSet('arm64', 8, True, 100))
COUNT_REPEAT = 2
TREES = ('base', 'ours')


def run_counts(outroot: Path, sets: Sequence[CountSet] = COUNT_SETS,
	       repeat: int = COUNT_REPEAT) -> Dict[str, Dict[str, List[Run]]]:
	"""{set label: {tree: [Run...]}}, each kernel booted repeat times
	with the same seed."""
	raw: Dict[str, Dict[str, List[Run]]] = {}
	for s in sets:
		raw[s.label()] = {t: [] for t in TREES}
		for r in range(repeat):
			for t in TREES:
				raw[s.label()][t].append(count_boot(t, s.arch, s.smp, s.storm, outroot,
								    n=s.n, run=r, variant=s.variant))
	return raw


def report(raw: Dict[str, Dict[str, List[Run]]], sets: Sequence[CountSet] = COUNT_SETS) -> str:
	parts = []
	for s in sets:
		if s.label() in raw:
			parts += [counts_table(s.title(), raw[s.label()]), '',
				  model_table(s.label(), raw[s.label()]), '']
	return '\n'.join(parts)


# ---------------------------------------------------------------- cost model

@dataclass(frozen=True)
class Cost:
	"""What one counted event costs on hardware, in ns, and why we think so."""
	what: str
	key: str
	ns: float
	source: str


# A model, not a measurement: the figures are the order of magnitude
# public sources give (EST: an estimate no source pins down).
COSTS = (
	Cost('instruction', 'insns', 0.33,
	     'EST: 3 GHz, one instruction a cycle'),
	Cost('HPET read', 'rd:HPET counter', 1000,
	     '0.5 us Intel, 1.5 us AMD (LKML 2005-10-19, Ladisch, Vandrovec); 1.2 us per '
	     'clock_gettime() on HPET (RHEL RT 7 Reference Guide 15.2.4); ~2 us on a '
	     '2-socket Cascade Lake (LKML 2021-11-15, Tang, Long); arch/x86/kernel/hpet.c: '
	     '"takes thousands of CPU cycles"'),
	Cost('HPET register read', 'rd:HPET', 1000, 'as the counter: a round trip to the chipset'),
	Cost('HPET write', 'wr:HPET', 100,
	     'EST: a posted uncached write; no public figure (hpet.c: the comparator write '
	     'lands up to 2 HPET cycles, 140 ns, late on ATI and ICH9/10)'),
	Cost('local timer read', 'rd:LAPIC timer', 100,
	     'EST: an uncached xAPIC read (LVTT, before a mode change)'),
	Cost('local timer write', 'wr:LAPIC timer', 100,
	     'EST: an uncached xAPIC write (x2APIC and TSC-deadline: a non-serializing WRMSR, '
	     'FreeBSD r297348); no public bare-metal figure'),
	Cost('IPI send', 'wr:LAPIC ICR', 200,
	     'EST: an ICR write and the delivery-status poll; 4300-6000 cycles send to '
	     'handler done inside KVM (IPI virtualization v7 cover letter, 2022) bound it '
	     'from above'),
	Cost('cache-line transfer', 'line', 50,
	     'same socket 20-51 ns Intel, 16-25 ns in an AMD CCX; across sockets 108-136 ns '
	     '(github.com/nviennot/core-to-core-latency)'),
)
# lines that move per lock section when the lock is contended: the lock's
# and the broadcast state's (a model: each kernel touches more than one
# line of state under the lock, the state rarely stays in the holder's cache)
LINES_PER_SECTION = 2
IDLE_RATES = (1000, 10000)	# deep-idle entries per second per CPU


def ns_of(c: Counts) -> float:
	return sum(c.get(k.key, 0) * k.ns for k in COSTS if k.key != 'line')


def model(runs: Dict[str, List[Run]]) -> List[str]:
	"""Rows of estimated cost per operation and per wakeup, in all and
	under the lock, and the CPUs at which the lock saturates, per kernel,
	from the first boot's counts."""
	line_ns = next(k.ns for k in COSTS if k.key == 'line')
	rows = []
	for tree, rs in runs.items():
		if not rs or not rs[0].ops:
			continue
		r = rs[0]
		exits = r.ops.get('exit', ({}, {}))[0].get('calls', 0)
		if not exits:
			continue
		cells = []
		for op in OP_ROWS:
			c, lock = r.ops.get(op, ({}, {}))
			n = c.get('calls', 0) or 1
			cells.append(f'{ns_of(c) / n:.0f} / {ns_of(lock) / n:.0f}')
		c, lock = wakeup_counts(r)
		per_wakeup = ns_of(c) / exits
		sections = lock.get('calls', 0) / exits
		serial = (ns_of(lock) / exits) + sections * LINES_PER_SECTION * line_ns
		sat = ', '.join(f'{1e9 / (serial * rate):.0f} at {rate}/s' for rate in IDLE_RATES)
		rows.append(f'| {tree} | ' + ' | '.join(cells) +
			    f' | {per_wakeup:.0f} | {serial:.0f} | {sat} |')
	return rows


def model_table(title: str, runs: Dict[str, List[Run]]) -> str:
	lines = [f'model ({title}), ns priced by the cost model below: each operation in all / '
		 'under the lock; per wakeup, all the broadcast does and its serial part (under '
		 f'the lock, plus {LINES_PER_SECTION} cache-line transfers per lock section); the '
		 'CPUs at which the lock is busy all the time (1 / (serial x deep-idle entries '
		 'per second per CPU))', '',
		 '| kernel | enter | exit | expiry | per wakeup | serial per wakeup | '
		 'lock saturates at (CPUs) |',
		 '|---|---|---|---|---|---|---|'] + model(runs)
	return '\n'.join(lines)


def costs_table() -> str:
	return '\n'.join(['cost model (what each counted event is priced at; EST: no public '
			  'figure, an estimate):', ''] +
			 [f'  {k.what}: {k.ns:g} ns. {k.source}' for k in COSTS])
