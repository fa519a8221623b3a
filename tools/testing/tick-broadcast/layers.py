# SPDX-License-Identifier: GPL-2.0
"""The testbed's modules and who imports whom: the layering that
tests/test_layers.py enforces, and what `tb.py list layers` prints.

Bottom layer: reads the modules' source, imports none of them.
"""

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

TOOLS = Path(__file__).resolve().parent
# Modules nothing below the command line may import.
COMMANDS: Set[str] = {'tb', 'check', 'bench', 'commands'}
# Libraries and what they may import of the testbed (None: anything
# that is not a command).
LIBRARIES: Dict[str, Set[str]] = {
	'layers': set(),
	'results': set(),
	'arches': set(),
	'progress': set(),
	'guestdata': set(),
	'hops': {'guestdata'},
	'coalesce': {'guestdata'},
	'patchset': set(),
	'backport': {'patchset'},
	'scenarios': {'guestdata', 'coalesce', 'results', 'arches'},
	'report': {'guestdata', 'scenarios', 'results'},
	'kunitcmd': {'arches'},
	'configbuilds': {'arches', 'results'},
	'workspace': {'progress', 'patchset', 'kunitcmd', 'absorb', 'results', 'arches'},
	'hostdelay': set(),
	'qemu': {'progress', 'workspace', 'guestdata', 'arches', 'hostdelay'},
	'firmware': {'progress', 'workspace', 'qemu', 'arches'},
	'runs': {'progress', 'workspace', 'qemu', 'scenarios', 'firmware', 'results',
		 'guestdata'},
	'stress': {'progress', 'workspace', 'qemu', 'scenarios', 'guestdata', 'results'},
	'stackgit': {'patchset', 'progress'},
	'absorb': {'patchset', 'stackgit', 'progress'},
	'rangediff': {'patchset', 'stackgit', 'progress'},
	'series': {'backport', 'configbuilds', 'patchset', 'kunitcmd', 'stackgit', 'progress', 'results'},
	'seriesedit': {'series', 'patchset', 'stackgit', 'progress'},
	'seriessteps': {'backport', 'series', 'patchset', 'workspace', 'progress', 'kunitcmd', 'runs',
			'stackgit', 'results', 'arches'},
}


def modules() -> List[str]:
	return sorted(p.stem for p in TOOLS.glob('*.py'))


def imports(name: str) -> Set[str]:
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


def graph() -> Dict[str, Set[str]]:
	return {m: imports(m) for m in modules()}


def cycle(g: Dict[str, Set[str]]) -> Optional[List[str]]:
	"""A list of modules forming an import cycle, or None."""
	state: Dict[str, str] = {}

	def visit(m: str, path: List[str]) -> Optional[List[str]]:
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


def summary(name: str) -> str:
	"""The first paragraph of a module's docstring, on one line."""
	doc = ast.get_docstring(ast.parse((TOOLS / f'{name}.py').read_text())) or ''
	return ' '.join(doc.split('\n\n', 1)[0].split())


def ordered() -> List[str]:
	"""The modules, each after everything it imports (bottom first)."""
	g, out = graph(), []
	seen: Set[str] = set()

	def visit(m: str) -> None:
		if m in seen:
			return
		seen.add(m)
		for n in sorted(g[m]):
			visit(n)
		out.append(m)
	for m in sorted(g, key=lambda m: (len(g[m]), m)):
		visit(m)
	return out
