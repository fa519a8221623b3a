# SPDX-License-Identifier: GPL-2.0
"""make check: every test of the series, on ours and on the base.

Static checks first (they need no build), then both kernels are built,
their KUnit suites run under kunit.py, and every QEMU scenario boots on
each. One line per test, then "N passed, N failed".
"""

import re
import subprocess
import time

import scenarios

IGNORE = 'COMMIT_MESSAGE,MISSING_SIGN_OFF,FILE_PATH_CHANGES,SPDX_LICENSE_TAG'
# Trace event headers are laid out as the tracing subsystem's macros want
# (TP_STRUCT__entry( on a line of its own, arguments on the next), as every
# header in include/trace/events/ is; --strict flags that layout.
IGNORE_TRACE = ',OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT'


def series_paths(tb):
	"""Every file and hunk of series.conf, as repository paths."""
	paths = []
	for line in (tb.TOOLS / 'series.conf').read_text().splitlines():
		f = line.split('#', 1)[0].split()
		if f and f[1] not in paths:
			paths.append(f[1])
	return paths


def checkpatch(tb):
	"""checkpatch.pl --strict on every file and hunk of the series.

	Files wholly ours go in as new-file patches, so that checkpatch also
	reads Kconfig and Makefile fragments; hunks go in as they are.
	"""
	pristine = tb.unpack_pristine()
	script = pristine / 'scripts' / 'checkpatch.pl'
	rows = []
	for rel in series_paths(tb):
		path = tb.REPO / rel
		if rel.endswith('.diff'):
			patch = path.read_text()
		else:
			r = subprocess.run(['diff', '-u', '--label', '/dev/null', '--label',
					    f'b/{rel}', '/dev/null', str(path)],
					   capture_output=True, text=True)
			patch = f'diff --git a/{rel} b/{rel}\nnew file mode 100644\n' + r.stdout
		ignore = IGNORE + (IGNORE_TRACE if rel.startswith('include/trace/events/') else '')
		cmd = ['perl', str(script), '--strict', '--no-tree', '--terse',
		       '--show-types', '--ignore', ignore, '-']
		r = subprocess.run(cmd, input=patch, capture_output=True, text=True, cwd=pristine)
		bad = [ln for ln in r.stdout.splitlines() if re.search(r': (ERROR|WARNING|CHECK):', ln)]
		rows.append((f'static/checkpatch/{rel}', 'fail' if bad or r.returncode else 'pass',
			     '\n'.join(bad[:10]) or r.stdout[-500:]))
	return rows


def c_sources(tb):
	return [p for p in series_paths(tb) if p.endswith('.c')]


def kerneldoc(tb):
	"""scripts/kernel-doc -none -Wall on our C files and headers."""
	pristine = tb.unpack_pristine()
	rows = []
	for rel in [p for p in series_paths(tb) if p.endswith(('.c', '.h'))]:
		r = subprocess.run(['perl', 'scripts/kernel-doc', '-none', '-Wall',
				    str(tb.REPO / rel)], capture_output=True, text=True,
				   cwd=pristine)
		out = (r.stdout + r.stderr).strip()
		rows.append((f'static/kernel-doc/{rel}', 'fail' if out or r.returncode else 'pass',
			     out[-1500:]))
	return rows


NONSTATIC_DEF = re.compile(r'^(?!static\b)(?:[a-z_][\w \*]*?)\b(\w+)\([^;{]*\)\n\{', re.M)


def kerneldoc_coverage(tb):
	"""Every non-static function of our kernel code has a kernel-doc comment."""
	rows = []
	for rel in [p for p in c_sources(tb) if '/tests/' not in p]:
		text = (tb.REPO / rel).read_text()
		missing = []
		for m in NONSTATIC_DEF.finditer(text):
			before = text[:m.start()].rstrip()
			block = before[before.rfind('/*'):] if before.endswith('*/') else ''
			if not block.startswith('/**') or f' {m.group(1)} - ' not in block.split('\n')[1]:
				missing.append(m.group(1))
		rows.append((f'static/kernel-doc-coverage/{rel}', 'fail' if missing else 'pass',
			     'no kernel-doc: ' + ', '.join(missing)))
	return rows


def sparse_w1(tb, tree):
	"""sparse (C=2) and W=1 on the objects of our C files, in tree's build."""
	src = tb.tree_dir(tree)
	rows = []
	for rel in c_sources(tb):
		obj = rel[:-2] + '.o'
		r = subprocess.run(['make', f'O={tb.build_dir_name()}', 'CC=ccache gcc',
				    'C=2', 'W=1', obj], cwd=src, env=tb.build_env(),
				   capture_output=True, text=True)
		bad = [ln for ln in (r.stdout + r.stderr).splitlines()
		       if re.search(r'warning:|error:', ln)]
		rows.append((f'static/sparse-W1/{rel}', 'fail' if bad or r.returncode else 'pass',
			     '\n'.join(bad[:10]) or r.stderr[-800:]))
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

	metrics = {}
	emit(checkpatch(tb))
	emit(kerneldoc(tb))
	emit(kerneldoc_coverage(tb))
	names = ['hpet-irqoff'] if args.quick else list(scenarios.SCENARIOS)
	outroot = tb.CACHE / 'runs' / 'check'
	for tree in tb.TREES:
		tb.build(tree)
		if tree == 'ours':
			emit(sparse_w1(tb, tree))
		emit(tb.kunit(tree))
		for n in names:
			row = scenarios.run(tb, n, tree, outroot)
			metrics[(n, tree)] = row[4]
			emit([row])
	emit([scenarios.compare(n, metrics[(n, 'ours')], metrics[(n, 'base')]) for n in names])
	if args.quick:
		names = []
	else:
		names = scenarios.DEBUG_SCENARIOS
	for tree in tb.TREES if names else ():
		tb.build(tree, 'debug')
		emit(tb.kunit(tree, 'debug'))
		for n in names:
			emit([scenarios.run(tb, n, tree, outroot, variant='debug')])
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
