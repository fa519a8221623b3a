# SPDX-License-Identifier: GPL-2.0
"""kunit.py's command lines, built in one place for every caller.

Imports only the table of architectures: the series checks (below
workspace) use it as well as the builds, the KUnit runs and make mutate.
"""

import sys
from typing import List, Sequence

from arches import ARCHES

KUNIT_PY = 'tools/testing/kunit/kunit.py'
KUNIT_TIMEOUT = 900
# The in-tree command of the series' cover letter: the decision core's
# suite on kunit.py's default architecture, UML.
UML_ARGS = ['--kunitconfig=kernel/time/tests',
	    '--make_options', 'CC=ccache gcc', '--make_options', 'HOSTCC=ccache gcc']


def kunit_py(sub: str, *args: str) -> List[str]:
	"""kunit.py's command line for subcommand sub (config, build, run,
	exec) with args, to run in a kernel tree."""
	return [sys.executable, KUNIT_PY, sub] + list(args)


def boot_args(arch: str, qemu_args: Sequence[str] = (), timeout: int = KUNIT_TIMEOUT) -> List[str]:
	"""kunit.py's arguments for booting the suites under QEMU, the same
	for every run: 4 CPUs and qemu_args, the timeout, arch's kernel
	arguments (arches.py)."""
	return (['--qemu_args', ' '.join(['-smp 4'] + list(qemu_args)),
		 '--timeout', str(timeout)] + list(ARCHES[arch].kunit_args))
