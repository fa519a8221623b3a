# SPDX-License-Identifier: GPL-2.0
"""The testbed's modules form layers: no import cycle, commands on top."""

import importlib
import subprocess
import unittest
from pathlib import Path

from layers import COMMANDS, LIBRARIES, cycle, graph, modules

TOOLS = Path(__file__).resolve().parents[1]
REPO = TOOLS.parents[2]


class Layers(unittest.TestCase):
	def test_no_cycle(self):
		self.assertIsNone(cycle(graph()))

	def test_cycle_detector_finds_one(self):
		self.assertEqual(cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}), ['a', 'b', 'c', 'a'])
		self.assertIsNone(cycle({'a': {'b'}, 'b': set()}))

	def test_nothing_imports_a_command_but_tb(self):
		g = graph()
		for m, deps in g.items():
			if m != 'tb':
				self.assertFalse(deps & COMMANDS, f'{m} imports {deps & COMMANDS}')

	def test_libraries_import_only_lower_layers(self):
		g = graph()
		for lib, allowed in LIBRARIES.items():
			self.assertLessEqual(g[lib], allowed, f'{lib} imports {g[lib] - allowed}')

	def test_every_module_imports(self):
		for m in modules():
			importlib.import_module(m)

	def test_make_passes_bench_runs(self):
		r = subprocess.run(['make', '-n', '-C', str(REPO), 'bench', 'RUNS=2',
				    'SCALING_RUNS=1'], capture_output=True, text=True)
		self.assertIn('bench --runs 2 --scaling-runs 1', r.stdout)
		r = subprocess.run(['make', '-n', '-C', str(REPO), 'bench'],
				   capture_output=True, text=True)
		self.assertNotIn('--runs', r.stdout)


if __name__ == '__main__':
	# python3 tools/testing/tick-broadcast/tests/test_layers.py [-v];
	# tb.py list layers prints who imports whom
	unittest.main()
