# SPDX-License-Identifier: GPL-2.0
"""Everything the guest reports, parsed: the one reader of guest output.

guest/init writes "@@" lines to the data channel (the second serial
port); guest/tbprobe.c writes the lateness lines. Formats:

  @@begin plan=STEP,...          start of the plan
  @@snap NAME begin|end          a snapshot; between the two:
    @@kernel RELEASE  @@bcdev DEV  @@cpuidle_driver DRV  @@online LIST
    @@idle cpu=C state=S name=N usage=U time=US
    @@uptime SECS IDLE
    @@file PATH                  followed by the file's lines
  @@lat NAME cpu=C|all n= p50= p90= p99= max=   (microseconds)
  @@raw NAME cpu=C V,V,...       every sample of a lateness run (ns)
  @@hotplug rounds= offlined= online=
  @@s2idle tries= ok=
  @@s3 tries= ok=
  @@busy lost=N                  refusals of the broadcast entry point, then
  @@busy cpu=C ret=R n=N         per CPU and return value (guest/init busy)
  @@ipis lost=N                  the wake IPIs sent, then
  @@ipis mask=M n=N              N sends to the CPUs of mask M (guest/init ipis)
  @@prof CPU begin ... @@prof end   function profiler table (trace_stat)
  @@trace NAME begin ... @@trace NAME end   ftrace text
 @@soak NAME cpu=C|all sleeps= wakeups= stuck= p50= p99= p999= max=   (us)
  @@soak NAME stuck cpu=C target= now=   a sleeper that never woke (ns)
  @@stress STEP hotplug= hotplug_failed= owner_offlined= handover= handover_bad=
         s2idle= s2idle_ok= bcdev= online=   counts of a stress step
  @@handover-error TEXT          a broken expectation of the hand-over step
  @@progress TEXT                a long step is alive (for the watchdog)
  @@late RUN cpu=C late=NS       a wakeup of tbprobe lat 50 ms or more late
  @@host-late RUN cpu=C late=NS host=NS   the same, with what the host
                                 delayed QEMU meanwhile (hostdelay.py)
  @@error TEXT
  @@end                          the plan ran to its end

and on the console, besides the kernel's messages:

  @@hb UPTIME                    the guest's heartbeat, every HB_PERIOD s
  KUnit lines of the bench suites (bench_enter_exit:, bench_core_expire:)

This module imports nothing of the testbed; it turns text into data.
"""

import re
from dataclasses import dataclass, field
from typing import (Collection, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple,
		    TypedDict)

HB_PERIOD = 2		# seconds between two heartbeats of guest/init
# arm64's wake IPI row in /proc/interrupts (x86 counts them in LOC)
BC_IPI = 'Timer broadcast interrupts'
HB_LINE = re.compile(r'^@@hb (\d+(?:\.\d+)?)[ \t\r]*(?:\n|$)', re.M)


# ---------------------------------------------------------------- data channel

# A run's figures as the guest printed them, by name: n, p50, p90, p99,
# max (microseconds) of a lateness run; sleeps, wakeups, stuck, ... of a
# soak.
Stats = Dict[str, float]


@dataclass
class Snapshot:
	"""One snapshot (@@snap NAME begin .. end).

	idle		{(cpu, state): usage}
	idle_us		{(cpu, state): time in the state (us)}
	idle_name	{(cpu, state): the state's name}
	files		{path: the file's lines}
	bcdev		the broadcast device, driver the cpuidle driver
	kernel		the kernel release, online the online CPUs ('': not
			reported), uptime the guest's (0: not reported)
	"""
	idle: Dict[Tuple[int, int], int] = field(default_factory=dict)
	idle_us: Dict[Tuple[int, int], int] = field(default_factory=dict)
	idle_name: Dict[Tuple[int, int], str] = field(default_factory=dict)
	files: Dict[str, List[str]] = field(default_factory=dict)
	bcdev: str = ''
	driver: str = ''
	kernel: str = ''
	online: str = ''
	uptime: float = 0.0


@dataclass
class Report:
	"""Everything the data channel reported (parse()).

	snaps		{name: Snapshot}
	lat		{run: {cpu, or all (last: tbprobe storm): Stats}}
	errors		the @@error lines
	end, begin	whether the plan ran to its end, and began
	hotplug		@@hotplug rounds= offlined= online= ({}: none)
	s2idle		@@s2idle tries= ok= ({}: none)
	s3		@@s3 tries= ok= ({}: none)
	busy		{(cpu, return value): count} of the broadcast entry
			point (None: no @@busy line at all)
	ipis		{mask: sends} of the broadcast's wake IPIs (None: no
			@@ipis line at all), ipis_lost the probe's lost events
	soak		{run: {cpu or all: Stats}} of tbprobe soak
	stuck		the @@soak NAME stuck lines: sleepers that never woke
	stress		{STEP: {counter: value}} of the stress steps
	handover_errors	the @@handover-error lines
	host_late	the @@host-late lines: [(run, cpu, late ns, host ns)]
	"""
	snaps: Dict[str, Snapshot] = field(default_factory=dict)
	lat: Dict[str, Dict[str, Stats]] = field(default_factory=dict)
	errors: List[str] = field(default_factory=list)
	end: bool = False
	begin: bool = False
	hotplug: Dict[str, str] = field(default_factory=dict)
	s2idle: Dict[str, str] = field(default_factory=dict)
	s3: Dict[str, str] = field(default_factory=dict)
	busy: Optional[Dict[Tuple[int, int], int]] = None
	ipis: Optional[Dict[int, int]] = None
	ipis_lost: int = 0
	soak: Dict[str, Dict[str, Stats]] = field(default_factory=dict)
	stuck: List[str] = field(default_factory=list)
	stress: Dict[str, Dict[str, str]] = field(default_factory=dict)
	handover_errors: List[str] = field(default_factory=list)
	host_late: List[Tuple[str, int, int, int]] = field(default_factory=list)


def _kv(fields: Iterable[str]) -> Dict[str, str]:
	return dict(x.split('=', 1) for x in fields if '=' in x)


def parse(data: str) -> Report:
	"""Data channel -> Report."""
	res = Report()
	snap: Optional[Snapshot] = None
	cur_file: Optional[str] = None
	for line in data.splitlines():
		if line.startswith('@@snap '):
			f = line.split()
			if len(f) == 3 and f[2] == 'begin':
				snap = Snapshot()
				res.snaps[f[1]] = snap
			else:
				snap = None
			cur_file = None
			continue
		if line.startswith('@@lat '):
			f = line.split()
			kv = _kv(f[2:])
			cpu = kv.pop('cpu', None)
			if cpu is not None:
				res.lat.setdefault(f[1], {})[cpu] = {
					k: float(v) for k, v in kv.items()}
			continue
		if line.startswith(('@@hotplug ', '@@s2idle ', '@@s3 ')):
			f = line.split()
			setattr(res, f[0][2:], _kv(f[1:]))
			continue
		if line.startswith('@@busy '):
			kv = _kv(line.split()[1:])
			if res.busy is None:
				res.busy = {}
			if 'cpu' in kv:
				res.busy[(int(kv['cpu']), int(kv['ret']))] = int(kv['n'])
			continue
		if line.startswith('@@ipis '):
			kv = _kv(line.split()[1:])
			if res.ipis is None:
				res.ipis = {}
			if 'mask' in kv:
				mask = int(kv['mask'], 16)
				res.ipis[mask] = res.ipis.get(mask, 0) + int(kv['n'])
			res.ipis_lost += int(kv.get('lost', 0))
			continue
		if line.startswith('@@soak '):
			f = line.split()
			if len(f) > 2 and f[2] == 'stuck':
				res.stuck.append(line)
				continue
			kv = _kv(f[2:])
			cpu = kv.pop('cpu', None)
			if cpu is not None:
				res.soak.setdefault(f[1], {})[cpu] = {
					k: float(v) for k, v in kv.items()}
			continue
		if line.startswith('@@stress '):
			f = line.split()
			res.stress[f[1]] = _kv(f[2:])
			continue
		if line.startswith('@@host-late '):
			f = line.split()
			kv = _kv(f[2:])
			res.host_late.append((f[1], int(kv['cpu']), int(kv['late']), int(kv['host'])))
			continue
		if line.startswith('@@handover-error'):
			res.handover_errors.append(line)
			continue
		if line.startswith('@@error'):
			res.errors.append(line)
			continue
		if line.startswith('@@end'):
			res.end = True
			continue
		if line.startswith('@@begin'):
			res.begin = True
			continue
		if snap is None:
			continue
		if line.startswith('@@bcdev'):
			snap.bcdev = line[len('@@bcdev'):].strip()
		elif line.startswith('@@cpuidle_driver'):
			snap.driver = line[len('@@cpuidle_driver'):].strip()
		elif line.startswith('@@kernel'):
			snap.kernel = line[len('@@kernel'):].strip()
		elif line.startswith('@@online'):
			snap.online = line[len('@@online'):].strip()
		elif line.startswith('@@idle '):
			kv = _kv(line.split()[1:])
			key = (int(kv['cpu']), int(kv['state']))
			snap.idle[key] = int(kv['usage'])
			snap.idle_us[key] = int(kv['time'])
			snap.idle_name[key] = kv.get('name', '')
		elif line.startswith('@@uptime '):
			snap.uptime = float(line.split()[1])
		elif line.startswith('@@file '):
			cur_file = line.split()[1]
			snap.files[cur_file] = []
		elif line.startswith('@@'):
			cur_file = None
		elif cur_file:
			snap.files[cur_file].append(line)
	return res


def interrupts(snap: Snapshot) -> Dict[str, int]:
	"""/proc/interrupts of a snapshot -> {row: total over CPUs}; a row is
	named by its number ("0", "LOC", "IPI4") and, where it has one, by its
	description too ("Timer broadcast interrupts")."""
	lines = snap.files.get('/proc/interrupts', [])
	if not lines:
		return {}
	ncpu = len(lines[0].split())
	out: Dict[str, int] = {}
	for line in lines[1:]:
		if ':' not in line:
			continue
		key, rest = line.split(':', 1)
		total = 0
		fields = rest.split()
		for v in fields[:ncpu]:
			if not v.isdigit():
				break
			total += int(v)
		out[key.strip()] = total
		if key.strip().startswith('IPI') and len(fields) > ncpu:
			out[' '.join(fields[ncpu:])] = total
	return out


def wakeups(ipis: Dict[int, int]) -> Tuple[int, Dict[int, int]]:
	"""(sends, {cpu: wakeups}) of the wake IPIs of Report.ipis: a send
	to a mask of n CPUs carries n wakeups."""
	per_cpu: Dict[int, int] = {}
	for mask, n in ipis.items():
		for cpu in range(mask.bit_length()):
			if mask >> cpu & 1:
				per_cpu[cpu] = per_cpu.get(cpu, 0) + n
	return sum(ipis.values()), dict(sorted(per_cpu.items()))


def deep_entries(a: Snapshot, b: Snapshot) -> Dict[int, int]:
	"""{cpu: entries into states >= 1 between snapshots a and b}."""
	out: Dict[int, int] = {}
	for (cpu, state), usage in b.idle.items():
		if state >= 1:
			out[cpu] = out.get(cpu, 0) + usage - a.idle.get((cpu, state), 0)
	return out


def state_entries(a: Snapshot, b: Snapshot) -> Dict[str, Dict[int, int]]:
	"""{state name: {cpu: entries between snapshots a and b}}, every state
	(the kernel's own drivers have several: WFI, cpu-retention, cpu-sleep;
	POLL, C1, C2)."""
	out: Dict[str, Dict[int, int]] = {}
	for key, usage in b.idle.items():
		name = b.idle_name.get(key) or f'state{key[1]}'
		out.setdefault(name, {})[key[0]] = usage - a.idle.get(key, 0)
	return out


def deep_residency_pct(a: Snapshot, b: Snapshot) -> Optional[float]:
	"""Share of time (%) the CPUs spent in states >= 1 between a and b."""
	secs = b.uptime - a.uptime
	if secs <= 0:
		return None
	deep = sum(v - a.idle_us.get(k, 0) for k, v in b.idle_us.items() if k[1] >= 1)
	ncpu = len({k[0] for k in b.idle_us}) or 1
	return 100 * deep / 1e6 / secs / ncpu


@dataclass
class Counts:
	"""What the snapshots around the broadcast run (mid and end) show.

	deep		{cpu: entries into states >= 1}
	states		{state name: {cpu: entries}}, every state
	irq0		broadcast interrupts (IRQ0: HPET or PIT)
	loc		local timer interrupts and, on x86, the wake IPIs (LOC)
	bcipi		arm64's timer broadcast IPIs (BC_IPI)
	bcdev		the broadcast device, driver the cpuidle driver (end)
	"""
	deep: Dict[int, int]
	states: Dict[str, Dict[int, int]]
	irq0: int
	loc: int
	bcipi: int
	bcdev: str
	driver: str


@dataclass
class Metrics:
	"""The figures the verdicts use (metrics()): the broadcast run's
	counts (None: the guest did not report both snapshots), and every
	lateness run's figures over all CPUs, {run: Stats}."""
	counts: Optional[Counts] = None
	lateness: Dict[str, Stats] = field(default_factory=dict)


def metrics(res: Report) -> Metrics:
	"""The figures the verdicts use, from parse(): Metrics."""
	s = res.snaps
	m = Metrics()
	if 'mid' in s and 'end' in s:
		ia, ib = interrupts(s['mid']), interrupts(s['end'])
		m.counts = Counts(
			deep=deep_entries(s['mid'], s['end']),
			states=state_entries(s['mid'], s['end']),
			irq0=ib.get('0', 0) - ia.get('0', 0),
			loc=ib.get('LOC', 0) - ia.get('LOC', 0),
			bcipi=ib.get(BC_IPI, 0) - ia.get(BC_IPI, 0),
			bcdev=s['end'].bcdev,
			driver=s['end'].driver)
	for run in res.lat:
		if 'all' in res.lat[run]:
			m.lateness[run] = res.lat[run]['all']
	return m


def raw(data: str, name: str) -> List[float]:
	"""All raw lateness samples (us) of tbprobe run name, over all CPUs."""
	out: List[float] = []
	for line in data.splitlines():
		if line.startswith(f'@@raw {name} '):
			f = line.split()
			if len(f) > 3:
				out += [int(v) / 1000 for v in f[3].split(',') if v]
	return out


def percentile(samples: Sequence[float], p: float) -> Optional[float]:
	"""p-th percentile (0-100) of samples, nearest rank, as tbprobe does."""
	if not samples:
		return None
	s = sorted(samples)
	return s[min(len(s) - 1, int(len(s) * p / 100))]


def late_fraction(samples: Sequence[float], limit_us: float) -> Optional[float]:
	"""Share of samples later than limit_us."""
	if not samples:
		return None
	return sum(1 for v in samples if v > limit_us) / len(samples)


# ---------------------------------------------------------------- profiler

PROF_LINE = re.compile(r'^\s*(\S+)\s+(\d+)\s+([\d.]+) us\s+([\d.]+) us')


def prof(data: str, funcs: Collection[str]) -> Dict[str, Tuple[int, float]]:
	"""Function profiler tables -> {function: (hits, total us)} over all CPUs.

	trace_stat cuts function names to 30 characters: funcs maps them back.
	"""
	out: Dict[str, Tuple[int, float]] = {}
	for line in data.splitlines():
		m = PROF_LINE.match(line)
		if not m:
			continue
		fn = next((f for f in funcs if f[:30] == m.group(1)), None)
		if fn:
			h, t = out.get(fn, (0, 0.0))
			out[fn] = (h + int(m.group(2)), t + float(m.group(3)))
	return out


# ---------------------------------------------------------------- traces

TRACE_LINE = re.compile(r'^\s*.+?\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+): (\w+): (.*)$')


class Event(NamedTuple):
	"""One trace event: the CPU, the time (ns), the event, its fields."""
	cpu: int
	ns: int
	event: str
	fields: Dict[str, str]


def trace(data: str, name: Optional[str] = None) -> List[Event]:
	"""Trace text between @@trace NAME begin/end -> [Event (cpu, ns, event, fields)]."""
	out = []
	inside = False
	for line in data.splitlines():
		if line.startswith('@@trace '):
			f = line.split()
			inside = f[-1] == 'begin' and (name is None or f[1] == name)
			continue
		if not inside:
			continue
		m = TRACE_LINE.match(line)
		if not m:
			continue
		cpu, sec, frac, ev, rest = m.groups()
		ns = int(sec) * 10**9 + int(frac.ljust(9, '0')[:9])
		out.append(Event(int(cpu), ns, ev, _kv(rest.split())))
	return out


HIST_LINE = re.compile(r'^\{(.*)\}\s+hitcount:\s+(\d+)')


def hist(data: str, name: str) -> List[Tuple[Dict[str, str], int]]:
	"""The entries of the histogram printed between @@hist NAME begin/end:
	[({key: value as printed}, hitcount)]."""
	out: List[Tuple[Dict[str, str], int]] = []
	inside = False
	for line in data.splitlines():
		if line.startswith('@@hist '):
			f = line.split()
			inside = len(f) == 3 and f[1] == name and f[2] == 'begin'
			continue
		m = HIST_LINE.match(line.strip()) if inside else None
		if m:
			keys = dict((k.strip(), v.strip()) for k, _, v in
				    (kv.partition(':') for kv in m.group(1).split(',')))
			out.append((keys, int(m.group(2))))
	return out


# ---------------------------------------------------------------- console

def heartbeats(console: str) -> List[float]:
	"""Guest uptimes of the heartbeat lines on the console."""
	return [float(x) for x in HB_LINE.findall(console)]


def strip_heartbeats(console: str) -> str:
	return HB_LINE.sub('', console)


def kernel_release(console: str) -> Optional[str]:
	m = re.search(r'Linux version (\S+)', console)
	return m.group(1) if m else None


class KBench(TypedDict, total=False):
	"""The KUnit bench lines of a console (kbench()), those that came."""
	kbench_parts: Dict[str, int]
	kbench_pair_ns: int
	core_bench: List[Tuple[int, int, int]]


def kbench(console: str) -> KBench:
	"""KUnit bench lines on the console: {'kbench_pair_ns', 'kbench_parts', 'core_bench'}.

	kbench_parts: the bench_parts line, {part: ns per operation}, parts in
	the order the kernel printed them.
	"""
	m: KBench = {}
	p = re.search(r'bench_parts: tick_broadcast_parts cpu=\d+ batches=\d+((?: \w+=\d+)+)',
		      console)
	if p:
		m['kbench_parts'] = {k: int(v) for k, v in re.findall(r'(\w+)=(\d+)', p.group(1))}
	k = re.search(r'bench_enter_exit: \S+ cpu=\d+ batches=\d+ pairs=\d+ ns_per_pair=(\d+)',
		      console)
	if k:
		m['kbench_pair_ns'] = int(k.group(1))
	core = re.findall(r'bench_core_expire: n=(\d+) expire_ns=(\d+) scan_ns=(\d+)', console)
	if core:
		m['core_bench'] = [(int(n), int(e), int(s)) for n, e, s in core]
	return m
