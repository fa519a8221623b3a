# SPDX-License-Identifier: GPL-2.0
"""guest/init's shell functions, run on the host with busybox sh (or sh)."""

import re
import shutil
import subprocess
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


if __name__ == '__main__':
	unittest.main()
