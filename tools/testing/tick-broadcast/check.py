# SPDX-License-Identifier: GPL-2.0
"""make check: every test of the series, on ours and on the base.

Static checks first (they need no build), then both kernels are built,
their KUnit suites run under kunit.py, and every QEMU scenario boots on
each. One line per test, then "N passed, N failed".
"""

import subprocess
import time

import scenarios

# Our C sources and headers, checked as files; hunks are checked as patches.
STATIC_GLOBS = ('drivers/**/*.c', 'kernel/**/*.c', 'kernel/**/*.h',
		'include/**/*.h')


def checkpatch(tb):
	"""checkpatch.pl --strict on every file and hunk of the series."""
	pristine = tb.unpack_pristine()
	script = pristine / 'scripts' / 'checkpatch.pl'
	rows = []
	files = sorted({p for g in STATIC_GLOBS for p in tb.REPO.glob(g)})
	hunks = sorted((tb.REPO / 'hunks').glob('*.diff'))
	for path in files + hunks:
		rel = path.relative_to(tb.REPO)
		cmd = ['perl', str(script), '--strict', '--no-tree', '--terse',
		       '--show-types', '--ignore', 'FILE_PATH_CHANGES']
		cmd += [str(path)] if path.suffix == '.diff' else ['-f', str(path)]
		r = subprocess.run(cmd, capture_output=True, text=True, cwd=pristine)
		bad = [ln for ln in r.stdout.splitlines() if ': ERROR:' in ln or
		       ': WARNING:' in ln or ': CHECK:' in ln]
		rows.append((f'static/checkpatch/{rel}', 'fail' if bad or r.returncode else 'pass',
			     '\n'.join(bad[:10]) or r.stdout[-500:]))
	return rows


def cmd_check(args):
	import tb
	t0 = time.time()
	rows = []

	def emit(new):
		for name, st, detail, *_ in new:
			print(f'{st.upper():4} {name}' + (f'\n     {detail}' if st == 'fail' else ''),
			      flush=True)
		rows.extend(new)

	emit(checkpatch(tb))
	names = ['hpet-irqoff'] if args.quick else list(scenarios.SCENARIOS)
	outroot = tb.CACHE / 'runs' / 'check'
	for tree in tb.TREES:
		tb.build(tree)
		emit(tb.kunit(tree))
		for n in names:
			emit([scenarios.run(tb, n, tree, outroot)])
	passed = sum(1 for r in rows if r[1] == 'pass')
	failed = sum(1 for r in rows if r[1] == 'fail')
	skipped = sum(1 for r in rows if r[1] == 'skip')
	print(f'\nmake check took {time.time() - t0:.0f} s; reports in {outroot}')
	tail = f', {skipped} skipped' if skipped else ''
	print(f'{passed} passed, {failed} failed{tail}')
	raise SystemExit(1 if failed else 0)


def add_commands(sub):
	c = sub.add_parser('check', help='static checks, KUnit and scenarios on both trees')
	c.add_argument('--quick', action='store_true', help='one scenario only')
	c.set_defaults(fn=cmd_check)
