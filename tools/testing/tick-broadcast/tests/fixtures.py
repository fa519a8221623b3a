# SPDX-License-Identifier: GPL-2.0
"""Access to the recorded guest output in fixtures/ (see record.py).

Each fixture NAME is a trimmed real boot: NAME.data (data channel) and
NAME.console (console). README lists where each one came from.
"""

from pathlib import Path
from typing import Dict, Tuple

FIXTURES = Path(__file__).resolve().parent / 'fixtures'


def load(name: str) -> Tuple[str, str]:
	"""(console, data) text of fixture name."""
	return ((FIXTURES / f'{name}.console').read_text(),
		(FIXTURES / f'{name}.data').read_text())


def lat_lines(data: str) -> Dict[str, Dict[str, Dict[str, float]]]:
	"""{run: {cpu: {stat: float}}} read directly from the @@lat lines."""
	out: Dict[str, Dict[str, Dict[str, float]]] = {}
	for line in data.splitlines():
		if line.startswith('@@lat '):
			f = line.split()
			kv = dict(x.split('=') for x in f[2:])
			cpu = kv.pop('cpu')
			out.setdefault(f[1], {})[cpu] = {k: float(v) for k, v in kv.items()}
	return out
