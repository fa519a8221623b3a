# SPDX-License-Identifier: GPL-2.0
"""series: the base's own warnings are known at every step, wherever they move."""

import unittest

import series
import workspace


class MessageKey(unittest.TestCase):
	def test_a_warning_that_moved_is_the_same(self):
		a = ("../kernel/time/tick-broadcast.c:1034: warning: Function parameter or struct "
		     "member 'bc' not described in 'tick_broadcast_setup_oneshot'")
		b = a.replace('../', '').replace(':1034:', ':1071:')
		self.assertEqual(series.message_key(a), series.message_key(b))

	def test_another_warning_is_not(self):
		a = "kernel/time/tick-broadcast.c:12:5: warning: no previous prototype for 'f'"
		b = "kernel/time/tick-broadcast.c:12:5: warning: no previous prototype for 'g'"
		self.assertNotEqual(series.message_key(a), series.message_key(b))
		self.assertNotEqual(series.message_key(a),
				    series.message_key(a.replace('tick-broadcast.c', 'tick-sched.c')))


class OtherBase(unittest.TestCase):
	def test_the_fixes_for_another_base_go_to_their_own_directory(self):
		self.assertEqual(series.outdir_of(workspace, 'all'), workspace.CACHE / 'series')
		self.assertEqual(series.outdir_of(workspace, 'fixes', '6.12'),
				 workspace.CACHE / 'series-fixes')
		self.assertEqual(series.outdir_of(workspace, 'fixes', '6.1'),
				 workspace.CACHE / 'series-fixes-6.1')

	def test_make_series_passes_the_base(self):
		import subprocess
		r = subprocess.run(['make', '-n', '-C', str(workspace.REPO), 'series', 'PART=fixes',
				    'BASE=6.1'], capture_output=True, text=True)
		self.assertRegex(r.stdout, r'series --part fixes --kernel 6\.1\b')
		r = subprocess.run(['make', '-n', '-C', str(workspace.REPO), 'series'],
				   capture_output=True, text=True)
		self.assertNotIn('--kernel', r.stdout)


if __name__ == '__main__':
	unittest.main()
