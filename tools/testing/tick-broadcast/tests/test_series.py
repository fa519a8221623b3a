# SPDX-License-Identifier: GPL-2.0
"""series: the base's own warnings are known at every step, wherever they move."""

import unittest

import series


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


if __name__ == '__main__':
	unittest.main()
