# SPDX-License-Identifier: GPL-2.0
"""The testbed's modules form layers: no import cycle, commands on top."""

import ast
import importlib
import subprocess
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1]
REPO = TOOLS.parents[2]
# Modules nothing below the command line may import.
COMMANDS = {'tb', 'check', 'bench', 'commands'}
# Libraries and what they may import of the testbed (None: anything
# that is not a command).
LIBRARIES = {
	'results': set(),
	'arches': set(),
	'progress': set(),
	'guestdata': set(),
	'hops': {'guestdata'},
	'coalesce': {'guestdata'},
	'patchset': set(),
	'scenarios': {'guestdata', 'results', 'arches'},
	'kunitcmd': {'arches'},
	'configbuilds': {'arches', 'results'},
	'workspace': {'progress', 'patchset', 'kunitcmd', 'absorb', 'results', 'arches'},
	'qemu': {'progress', 'workspace', 'guestdata', 'arches'},
	'firmware': {'progress', 'workspace', 'qemu', 'arches'},
	'runs': {'progress', 'workspace', 'qemu', 'scenarios', 'firmware', 'results',
		 'guestdata'},
	'stress': {'progress', 'workspace', 'qemu', 'scenarios', 'guestdata', 'results'},
	'stackgit': {'patchset', 'progress'},
	'absorb': {'patchset', 'stackgit', 'progress'},
	'rangediff': {'patchset', 'stackgit', 'progress'},
	'series': {'configbuilds', 'patchset', 'kunitcmd', 'stackgit', 'progress', 'results'},
	'seriesedit': {'series', 'patchset', 'stackgit', 'progress'},
	'seriessteps': {'series', 'patchset', 'workspace', 'progress', 'kunitcmd', 'runs',
			'stackgit', 'results', 'arches'},
}


def modules():
	return sorted(p.stem for p in TOOLS.glob('*.py'))


def imports(name):
	"""Local modules that module name imports, anywhere in its body."""
	tree = ast.parse((TOOLS / f'{name}.py').read_text())
	local = set(modules())
	out = set()
	for node in ast.walk(tree):
		if isinstance(node, ast.Import):
			out |= {a.name.split('.')[0] for a in node.names}
		elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
			out.add(node.module.split('.')[0])
	return out & local - {name}


def graph():
	return {m: imports(m) for m in modules()}


def cycle(g):
	"""A list of modules forming an import cycle, or None."""
	state = {}

	def visit(m, path):
		state[m] = 'open'
		for n in sorted(g.get(m, ())):
			if state.get(n) == 'open':
				return path[path.index(n):] + [n] if n in path else [m, n]
			if n not in state:
				c = visit(n, path + [n])
				if c:
					return c
		state[m] = 'done'
		return None
	for m in sorted(g):
		if m not in state:
			c = visit(m, [m])
			if c:
				return c
	return None


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
	# python3 tools/testing/tick-broadcast/tests/test_layers.py [-v]
	# (or "graph" to print who imports whom)
	import sys
	sys.path.insert(0, str(TOOLS))
	if sys.argv[1:] == ['graph']:
		for m, deps in sorted(graph().items()):
			print(f'{m:12} -> {" ".join(sorted(deps)) or "-"}')
		sys.exit(0)
	unittest.main()
