# SPDX-License-Identifier: GPL-2.0
"""qemu.Watchdog: a stuck plan, a silent guest and a starved host."""

import unittest

import qemu
from tests import fixtures


def beats(n, start=4.0):
	return ''.join(f'@@hb {start + 2 * i:.2f}\n' for i in range(n))


class Watchdog(unittest.TestCase):
	def test_healthy_boot_runs_on(self):
		dog = qemu.Watchdog(0, timeout=150)
		for t in range(0, 100):
			self.assertIsNone(dog.update(t, 'boot\n' + beats(t // 2), 'x' * t))

	def test_plan_stuck_while_heartbeat_goes_on_is_a_hang(self):
		dog = qemu.Watchdog(0, timeout=150)
		self.assertIsNone(dog.update(0, 'boot\n', '@@begin\n'))
		st = None
		for t in range(1, 60):
			st = dog.update(t, 'boot\n' + beats(t // 2), '@@begin\n')
			if st:
				break
		assert st is not None
		self.assertTrue(st.startswith('hang'), st)
		self.assertGreater(t, qemu.QUIET_LIMIT)
		self.assertLess(t, qemu.QUIET_LIMIT + 5)

	def test_silent_guest_is_quiet_not_hang(self):
		# Nothing at all (no heartbeat either): a starved host or a wholly
		# hung guest. Not a hang at QUIET_LIMIT; "quiet" at SILENT_LIMIT.
		dog = qemu.Watchdog(0, timeout=300)
		con, data = 'boot\n' + beats(3), '@@begin\n'
		self.assertIsNone(dog.update(0, con, data))
		self.assertIsNone(dog.update(qemu.QUIET_LIMIT + 5, con, data))
		st = dog.update(qemu.SILENT_LIMIT + 1, con, data)
		assert st is not None
		self.assertTrue(st.startswith('quiet'), st)

	def test_silent_boot_waits_longer_with_many_vcpus(self):
		# Before the first heartbeat the kernel boots: at 64 vCPUs under
		# -icount a step of it is silent for 80-90 s.
		limit = qemu.boot_silent_limit(64)
		self.assertEqual(qemu.boot_silent_limit(4), qemu.SILENT_LIMIT)
		dog = qemu.Watchdog(0, timeout=1800, boot_silent=limit)
		self.assertIsNone(dog.update(0, 'Linux version\n', ''))
		self.assertIsNone(dog.update(qemu.SILENT_LIMIT + 30, 'Linux version\n', ''))
		st = dog.update(limit + 1, 'Linux version\n', '')
		assert st is not None
		self.assertTrue(st.startswith('quiet'), st)
		# once the guest's heartbeat ran, the usual limit again
		dog = qemu.Watchdog(0, timeout=1800, boot_silent=limit)
		con = 'Linux version\n' + beats(1)
		self.assertIsNone(dog.update(0, con, '@@begin\n'))
		st = dog.update(qemu.SILENT_LIMIT + 1, con, '@@begin\n')
		assert st is not None
		self.assertTrue(st.startswith('quiet'), st)

	def test_slow_heartbeat_under_load_is_not_a_hang(self):
		# The host runs the guest now and then: few beats, long gaps.
		dog = qemu.Watchdog(0, timeout=600)
		self.assertIsNone(dog.update(0, 'boot\n', '@@begin\n'))
		for t in range(1, 80):
			st = dog.update(t, 'boot\n' + beats(t // 20), '@@begin\n')
			self.assertIsNone(st)

	def test_stall_report(self):
		dog = qemu.Watchdog(0, timeout=150)
		st = dog.update(5, 'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n', '')
		assert st is not None
		self.assertTrue(st.startswith('stall'), st)

	def test_timeout(self):
		dog = qemu.Watchdog(0, timeout=10)
		st = dog.update(11, 'a', 'b')
		assert st is not None
		self.assertTrue(st.startswith('timeout'))

	def test_recorded_boot_replayed(self):
		console, data = fixtures.load('ours-hpet-irqoff')
		dog = qemu.Watchdog(0, timeout=150)
		lines_c, lines_d = console.splitlines(True), data.splitlines(True)
		n = max(len(lines_c), len(lines_d))
		for i in range(n):
			self.assertIsNone(dog.update(i * 0.1, ''.join(lines_c[:i]), ''.join(lines_d[:i])))
