# SPDX-License-Identifier: GPL-2.0
import unittest

import guestdata
import hostdelay
import scenarios

MAIN, CPU0, CPU1, CPU2, IO = 'qemu-system-x86/10', 'CPU 0/TCG/11', 'CPU 1/TCG/12', \
	'CPU 2/TCG/13', 'worker/14'


def delays(main: int, c0: int, c1: int, c2: int, io: int = 0):
	return {MAIN: main, CPU0: c0, CPU1: c1, CPU2: c2, IO: io}


class HostDelays(unittest.TestCase):
	def run_boot(self, late_ms: int, starve: bool) -> str:
		"""A boot sampled every 0.2 s; a 300 ms-late line seen at t=10.0;
		with starve, CPU1 and the main loop waited 150 ms each just before."""
		h = hostdelay.HostDelays(poll=0.2)
		data = ''
		for i in range(60):
			t = i * 0.2
			ms = 1000000
			grow = 150 * ms if starve and 9.6 < t <= 9.8 else 0
			if t >= 10.0:
				data = f'@@late bc cpu=1 late={late_ms * ms}\n'
			prev = h.samples[-1][1] if h.samples else delays(0, 0, 0, 0)
			h.update(t, data, {k: v + (grow if k in (MAIN, CPU1) else ms)
					   for k, v in prev.items()})
		return h.lines()

	def test_starved_host_explains_the_lateness(self):
		res = guestdata.parse(self.run_boot(300, True))
		self.assertEqual(len(res.host_late), 1)
		run, cpu, late, host = res.host_late[0]
		self.assertEqual((run, cpu, late), ('bc', 1, 300000000))
		# main 150 ms + CPU1 150 ms + the next vCPU's 1 ms per poll
		self.assertGreaterEqual(host, 300000000)
		self.assertTrue(scenarios.late_cause_check(res).ok)

	def test_late_wakeup_the_host_does_not_explain_fails(self):
		res = guestdata.parse(self.run_boot(300, False))
		self.assertLess(res.host_late[0][3], 30000000)
		check = scenarios.late_cause_check(res)
		self.assertFalse(check.ok, check.detail)
		self.assertIn('cpu1 300 ms late', check.detail)

	def test_each_line_is_counted_once(self):
		h = hostdelay.HostDelays()
		line = '@@late bc cpu=0 late=60000000\n'
		h.update(1.0, line, delays(0, 0, 0, 0))
		h.update(1.2, line * 1, delays(0, 0, 0, 0))
		h.update(1.4, line * 2, delays(0, 0, 0, 0))
		self.assertEqual(len(h.seen), 2)

	def test_no_late_wakeup_passes(self):
		self.assertTrue(scenarios.late_cause_check(guestdata.parse('')).ok)


if __name__ == '__main__':
	unittest.main()
