# SPDX-License-Identifier: GPL-2.0
"""kunit.py's command lines, built in one place for every caller.

Imports nothing of the testbed: the series checks (below workspace) use
it as well as the builds, the KUnit runs and make mutate.
"""

import sys

KUNIT_PY = 'tools/testing/kunit/kunit.py'
KUNIT_TIMEOUT = 900
# Under TCG the clocksource watchdog may find the TSC skewed against the
# HPET in the middle of a case and switch clocksources by stop_machine(),
# which stalls the devices suite's lock-step cases until their 15 s
# timeouts. The KUnit boots never use the TSC. A panic reboots at once
# (QEMU runs with -no-reboot, so it exits) instead of leaving the run to
# the timeout. The PS/2 keyboard and mouse are probed asynchronously and
# announce themselves on the console whenever the probe ends, which can
# be between two lines of a parameterised case's KTAP header: kunit.py
# then loses count of the cases and reports the rest of the suite as
# crashed. The KUnit boots leave both ports alone.
KERNEL_ARGS = {
	'x86_64': ['--kernel_args', 'tsc=unstable', '--kernel_args', 'panic=1',
		   '--kernel_args', 'i8042.nokbd', '--kernel_args', 'i8042.noaux'],
	'arm64': ['--kernel_args', 'panic=1'],
}
# The in-tree command of the series' cover letter: the decision core's
# suite on kunit.py's default architecture, UML.
UML_ARGS = ['--kunitconfig=kernel/time/tests',
	    '--make_options', 'CC=ccache gcc', '--make_options', 'HOSTCC=ccache gcc']


def kunit_py(sub, *args):
	"""kunit.py's command line for subcommand sub (config, build, run,
	exec) with args, to run in a kernel tree."""
	return [sys.executable, KUNIT_PY, sub] + list(args)


def boot_args(arch, qemu_args=(), timeout=KUNIT_TIMEOUT):
	"""kunit.py's arguments for booting the suites under QEMU, the same
	for every run: 4 CPUs and qemu_args, the timeout, arch's kernel
	arguments."""
	return (['--qemu_args', ' '.join(['-smp 4'] + list(qemu_args)),
		 '--timeout', str(timeout)] + KERNEL_ARGS.get(arch, []))
