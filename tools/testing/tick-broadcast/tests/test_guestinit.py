# SPDX-License-Identifier: GPL-2.0
"""guest/init's shell functions, run on the host with busybox sh (or sh)."""

import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

INIT = Path(__file__).resolve().parents[1] / 'guest' / 'init'
SH = shutil.which('busybox') and ['busybox', 'sh'] or ['sh']


def function(name):
	"""The text of shell function name in guest/init."""
	m = re.search(rf'^{name}\(\) {{\n.*?^}}\n', INIT.read_text(), re.M | re.S)
	assert m, f'no function {name} in {INIT}'
	return m.group(0)


class WaitOneshot(unittest.TestCase):
	"""The plan waits for oneshot ticks unless the command line keeps the
	tick periodic for good (nohz=off and highres=off, in any order)."""

	def waits(self, cmdline):
		script = ('cat() { echo "$CMDLINE"; }\n'
			  'tick_periodic() { echo checked; return 1; }\n'
			  + function('wait_oneshot') + 'wait_oneshot\n')
		r = subprocess.run(SH + ['-c', script], env={'CMDLINE': cmdline, 'PATH': '/usr/bin:/bin'},
				   capture_output=True, text=True, timeout=10)
		self.assertEqual(r.returncode, 0, r.stderr)
		return 'checked' in r.stdout

	def test_periodic_for_good_does_not_wait(self):
		for c in ('console=ttyS0 nohz=off highres=off tb.seed=1',
			  'highres=off nohz=off', 'nohz=off highres=off'):
			with self.subTest(cmdline=c):
				self.assertFalse(self.waits(c))

	def test_otherwise_waits(self):
		for c in ('console=ttyS0 tb.seed=1', 'highres=off skew_tick=1', 'nohz=off',
			  'xnohz=off highres=off'):
			with self.subTest(cmdline=c):
				self.assertTrue(self.waits(c))

	def test_gives_up_after_ten_seconds(self):
		script = ('cat() { echo "$CMDLINE"; }\n'
			  'sleep() { n=$((n + 1)); }\n'
			  'tick_periodic() { return 0; }\n'
			  + function('wait_oneshot') + 'n=0; wait_oneshot; echo "slept $n"\n')
		r = subprocess.run(SH + ['-c', script], env={'CMDLINE': 'a b', 'PATH': '/usr/bin:/bin'},
				   capture_output=True, text=True, timeout=10)
		self.assertIn('slept 100', r.stdout)
		self.assertIn('@@error tick still periodic after 10 s', r.stdout)


# /proc/timer_list's tick devices as 6.12 prints them (timer_list.c)
BROADCAST = 'Tick Device: mode:     {}\nBroadcast device\nClock Event Device: hpet\n mode: 3\n\n'
PER_CPU = 'Tick Device: mode:     {}\nPer CPU device: {}\nClock Event Device: lapic\n mode: 3\n\n'


class TickPeriodic(unittest.TestCase):
	"""tick_periodic() reads the per-CPU tick devices' modes, not the
	broadcast device's."""

	def periodic(self, text):
		with tempfile.NamedTemporaryFile('w', suffix='.timer_list') as f:
			f.write(text)
			f.flush()
			fn = function('tick_periodic').replace('/proc/timer_list', f.name)
			r = subprocess.run(SH + ['-c', fn + 'tick_periodic && echo yes || echo no'],
					   env={'PATH': '/usr/bin:/bin'}, capture_output=True, text=True,
					   timeout=10)
		return r.stdout.strip() == 'yes'

	def test_modes(self):
		for text, want in (
				(BROADCAST.format(0) + PER_CPU.format(1, 0) + PER_CPU.format(1, 1), False),
				(BROADCAST.format(1) + PER_CPU.format(1, 0) + PER_CPU.format(0, 1), True),
				(BROADCAST.format(0) + PER_CPU.format(0, 0), True),
				('', False)):
			with self.subTest(text=text):
				self.assertEqual(self.periodic(text), want)


if __name__ == '__main__':
	unittest.main()
