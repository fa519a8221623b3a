# SPDX-License-Identifier: GPL-2.0
"""The testbed type-checks: Debian's mypy over every module and test,
as mypy.ini says (every function of the modules annotated)."""

import shutil
import subprocess
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1]
CONFIG = TOOLS / 'mypy.ini'
MYPY = shutil.which('mypy')


class Types(unittest.TestCase):
	@unittest.skipUnless(MYPY, 'mypy is not installed: apt-get install mypy '
			     '(tb.py unit installs it when run as root)')
	def test_mypy_finds_no_error(self):
		assert MYPY is not None
		r = subprocess.run([MYPY, '--config-file', str(CONFIG)], cwd=TOOLS,
				   capture_output=True, text=True)
		self.assertEqual(r.returncode, 0, f'{MYPY} --config-file {CONFIG}:\n'
				 f'{r.stdout}{r.stderr}')

	def test_the_config_covers_every_module(self):
		# mypy.ini names the files by pattern: a module elsewhere would
		# go unchecked
		covered = set(TOOLS.glob('*.py')) | set(TOOLS.glob('tests/*.py'))
		self.assertEqual(set(TOOLS.rglob('*.py')) - covered, set())


if __name__ == '__main__':
	unittest.main()
