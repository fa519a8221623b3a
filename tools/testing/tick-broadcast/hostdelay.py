# SPDX-License-Identifier: GPL-2.0
"""How long the host kept a guest from running when it woke late.

Under TCG the guest's clock is the host's: a vCPU thread that waits for a
host CPU (other guests, builds) makes the guest's timers late by as long,
and a wakeup the broadcast lost looks the same on the clock alone. The
host knows which it was. While a guest runs, qemu.watch() samples every
POLL seconds each QEMU thread's run delay (/proc/PID/task/TID/schedstat:
time spent runnable, waiting for a CPU) and notes when it first saw each
"@@late" line of the guest (tbprobe prints one at once for a wakeup at
least 50 ms late). After the boot, each such line gets

  @@host-late RUN cpu=C late=NS host=NS

on the data channel: host is what the host delayed the QEMU threads a
late wakeup depends on, within the time the sleep can have spanned: from
the line's lateness plus one poll before the sample that saw it, up to
that sample. The threads are the main loop (device timers, the HPET's
included) and every vCPU: their delays can add up along one wakeup (the
vCPU holding a lock the others spin on, the one taking the broadcast
interrupt, the sleeper). scenarios.py's "late-cause" check fails a
wakeup whose lateness the host does not explain.
"""

import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

POLL = 0.2		# seconds between two samples (qemu.watch()'s loop)
LATE_LINE = re.compile(r'^@@late (\S+) cpu=(\d+) late=(\d+)[ \t\r]*$', re.M)
VCPU = re.compile(r'^CPU \d+/')	# QEMU's vCPU threads: "CPU 0/TCG"

Sample = Tuple[float, Dict[str, int]]	# (host time, {thread: run delay ns})


def read_delays(pid: int) -> Dict[str, int]:
	"""{"COMM/TID": run delay in ns} of every thread of process pid."""
	out: Dict[str, int] = {}
	try:
		tasks = list(Path(f'/proc/{pid}/task').iterdir())
	except OSError:
		return out
	for task in tasks:
		try:
			comm = (task / 'comm').read_text().strip()
			out[f'{comm}/{task.name}'] = int((task / 'schedstat').read_text().split()[1])
		except (OSError, ValueError, IndexError):
			continue
	return out


class HostDelays:
	"""The samples of one boot, and when each "@@late" line was seen."""

	def __init__(self, pid: Optional[int] = None, poll: float = POLL) -> None:
		self.pid, self.poll = pid, poll
		self.samples: List[Sample] = []
		self.seen: List[Tuple[float, str, int, int]] = []	# (time, run, cpu, late)

	def update(self, now: float, data: str, delays: Optional[Dict[str, int]] = None) -> None:
		"""One sample at host time now; data: the data channel so far."""
		if delays is None:
			delays = read_delays(self.pid) if self.pid else {}
		if delays:	# none once QEMU has ended
			self.samples.append((now, delays))
		lines = LATE_LINE.findall(data)
		for run, cpu, late in lines[len(self.seen):]:
			self.seen.append((now, run, int(cpu), int(late)))

	def _at(self, t: float) -> Dict[str, int]:
		"""The last sample at or before t ({} if none)."""
		pick: Dict[str, int] = {}
		for when, delays in self.samples:
			if when > t:
				break
			pick = delays
		return pick

	def explained(self, seen: float, late_ns: int) -> int:
		"""ns the host delayed the threads a wakeup late_ns late, whose line
		was seen at sample time seen, depends on."""
		start = self._at(seen - late_ns / 1e9 - self.poll)
		end = self._at(seen)
		return sum(v - start[k] for k, v in end.items()
			   if k in start and (VCPU.match(k) or k.startswith('qemu-system')))

	def lines(self) -> str:
		"""The "@@host-late" lines of the boot."""
		return ''.join(f'@@host-late {run} cpu={cpu} late={late} '
			       f'host={self.explained(t, late)}\n'
			       for t, run, cpu, late in self.seen)
