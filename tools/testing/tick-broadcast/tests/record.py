#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Record a boot's output as a unit-test fixture, trimmed.

  record.py RUN_DIR NAME      RUN_DIR holds console.log and data.log (any
                              boot under $TB_CACHE/runs/); writes
                              fixtures/NAME.data and fixtures/NAME.console

Trimming keeps what the parsers and verdicts read: every "@@" line but
the /proc/timer_list dumps, the first RAW_KEEP samples of each @@raw line, the /proc/interrupts rows
the verdicts and bench read (IRQ_KEEP), the first TRACE_KEEP lines of
any other section (traces without the events hops.py ignores, profiler
tables),
and from the console the kernel version, the heartbeats, splats, suspend
and KUnit bench lines and the last lines. Figures in @@lat lines are the
guest's own, computed over all samples, so verdicts do not change.
"""

import re
import sys
from pathlib import Path

RAW_KEEP = 40
KEEP = re.compile(r'Linux version|@@hb|WARNING:|BUG:|Oops|panic|Call Trace:|stall|lockup|'
		  r'PM: suspend|bench_|tick_broadcast|Timer broadcast|clocksource|hpet|'
		  r'CPU\d+ is down|smpboot')


IRQ_KEEP = {'0', 'LOC', 'RES', 'CAL', 'ERR', 'IPI4'}	# IPI4: arm64's timer broadcast
TRACE_KEEP = 120
# trace events hops.py does not read: idle transitions, other hrtimers
TRACE_DROP = re.compile(r' cpu_idle: |: hrtimer_\w+: (?!.*function=hrtimer_wakeup)')


def trim_data(text):
	out = []
	skip = irqs = False
	traced = 0
	for line in text.splitlines():
		if TRACE_DROP.search(line):
			continue
		if line.startswith('@@'):
			skip = line.startswith('@@file /proc/timer_list')
			irqs = line.startswith('@@file /proc/interrupts')
			traced = 0
			if line.startswith('@@raw '):
				f = line.split()
				line = ' '.join(f[:3] + [','.join(f[3].split(',')[:RAW_KEEP])])
			if not skip:
				out.append(line)
			continue
		traced += 1
		if traced > TRACE_KEEP and not irqs:
			continue
		if irqs and 'CPU0' not in line and line.split(':')[0].strip() not in IRQ_KEEP:
			continue
		if not skip:
			out.append(line)
	return '\n'.join(out) + '\n'


def trim_console(text):
	lines = text.splitlines()
	keep = [ln for ln in lines[:-10] if KEEP.search(ln)]
	return '\n'.join(keep + lines[-10:]) + '\n'


def main():
	run, name = Path(sys.argv[1]), sys.argv[2]
	fx = Path(__file__).resolve().parent / 'fixtures'
	fx.mkdir(exist_ok=True)
	(fx / f'{name}.data').write_text(trim_data((run / 'data.log').read_text(errors='replace')))
	(fx / f'{name}.console').write_text(
		trim_console((run / 'console.log').read_text(errors='replace')))
	print(f'{fx / name}.{{data,console}}')


if __name__ == '__main__':
	main()
