# SPDX-License-Identifier: GPL-2.0
"""tbprobe on the host: a sleeper whose CPU is offline when it pins itself;
the storm's last CPU out of each round.

A hotplug storm beside the lateness run can take a CPU offline between
the probe's reading of the online CPUs and a sleeper's pin, which then
fails with EINVAL. A preloaded sched_setaffinity() fails that way for
the first calls of every sleeper; the run must still deliver every
sample. Needs gcc; seconds.
"""

import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1]

SHIM = r'''
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

static int fails = -1;

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	int (*real)(pid_t, size_t, const cpu_set_t *);

	if (fails < 0)
		fails = atoi(getenv("TB_PIN_FAILS") ?: "0");
	if (fails > 0) {
		fails--;
		errno = EINVAL;
		return -1;
	}
	real = dlsym(RTLD_NEXT, "sched_setaffinity");
	return real(pid, size, set);
}
'''


@unittest.skipUnless(shutil.which('gcc'), 'needs gcc')
class OnTheHost(unittest.TestCase):
	dir: tempfile.TemporaryDirectory
	probe: Path
	shim: Path

	@classmethod
	def setUpClass(cls):
		cls.dir = tempfile.TemporaryDirectory()
		d = Path(cls.dir.name)
		(d / 'shim.c').write_text(SHIM)
		subprocess.run(['gcc', '-O2', '-o', str(d / 'tbprobe'),
				str(TOOLS / 'guest' / 'tbprobe.c')], check=True)
		subprocess.run(['gcc', '-O2', '-shared', '-fPIC', '-o', str(d / 'shim.so'),
				str(d / 'shim.c'), '-ldl'], check=True)
		cls.probe, cls.shim = d / 'tbprobe', d / 'shim.so'

	@classmethod
	def tearDownClass(cls):
		cls.dir.cleanup()

	def lat(self, fails):
		return subprocess.run([str(self.probe), 'lat', 'pin', '3', '1000', '2000', '1'],
				      env={'LD_PRELOAD': str(self.shim), 'TB_PIN_FAILS': str(fails)},
				      capture_output=True, text=True, timeout=60)

	def test_every_sample_arrives_when_the_pin_fails_at_first(self):
		r = self.lat(3)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		self.assertNotIn('@@error', r.stdout)
		self.assertRegex(r.stdout, r'@@lat pin cpu=all n=\d+ ')


	def test_storm_last_cpu_is_the_latest_of_each_round(self):
		r = subprocess.run([str(self.probe), 'storm', 's', '20', '1000', '2000', '1'],
				   capture_output=True, text=True, timeout=60)
		self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
		lat = {}
		for m in re.finditer(r'^@@lat s cpu=(\S+) n=(\d+) p50=(\S+) .*max=(\S+)', r.stdout, re.M):
			lat[m.group(1)] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
		cpus = [c for c in lat if c.isdigit()]
		self.assertTrue(cpus, r.stdout)
		self.assertEqual(lat['last'][0], 20)
		self.assertEqual(lat['all'][0], 20 * len(cpus))
		# the latest of each round is at least as late as any CPU's, and
		# the latest of them all is the latest sample
		for c in cpus:
			self.assertGreaterEqual(lat['last'][1], lat[c][1], r.stdout)
		self.assertEqual(lat['last'][2], lat['all'][2], r.stdout)
		self.assertRegex(r.stdout, r'@@storm s missed=\d+')


if __name__ == '__main__':
	unittest.main()
