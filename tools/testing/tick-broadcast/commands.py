# SPDX-License-Identifier: GPL-2.0
"""The small commands of tb.py: deps, prepare, build, initramfs, report,
kunit, scenario, unit. Each ends by printing where its outputs are and
exits non-zero when something it checked failed.
"""

import shutil
import sys
import unittest

import qemu
import runs
import scenarios
import workspace
from progress import log


def cmd_deps(_args):
	workspace.install_deps()
	log('deps: every package is installed')


def cmd_prepare(_args):
	dirs = workspace.prepare_all()
	log(f'prepare: trees at {", ".join(map(str, dirs))}')


def cmd_build(args):
	for tree in args.trees:
		workspace.build_or_die(tree, args.variant, prepare=not args.no_prepare,
				       arch=args.arch)
	log(f'build: logs in {workspace.RUNS}/build-<tree>.log')


def cmd_initramfs(_args):
	print(qemu.initramfs())


def _print_row(row):
	print((row[3] / 'report.txt').read_text())
	print(f'{row[1].upper()} {row[0]}: {row[2]}')
	print(f'logs: {row[3]} (console.log, data.log, qemu.cmd, report.txt)\n')


def cmd_report(args):
	"""Boot hpet-irqoff on tree and print the report; fail if a verdict does."""
	workspace.build_or_die(args.tree)
	outroot = workspace.RUNS / 'report'
	shutil.rmtree(outroot, ignore_errors=True)
	row = runs.run('hpet-irqoff', args.tree, outroot)
	_print_row(row)
	sys.exit(1 if row[1] == 'fail' else 0)


def print_rows(rows, where=''):
	"""One line per test row, a failure's detail under it, and the count."""
	for name, st, detail in rows:
		print(f'{st.upper():4} {name}')
		if st == 'fail':
			print(detail)
	n = {s: sum(1 for r in rows if r[1] == s) for s in ('pass', 'fail', 'skip')}
	print(f'{n["pass"]} passed, {n["fail"]} failed, {n["skip"]} skipped' + where)


def cmd_kunit(args):
	workspace.build_or_die(args.tree, args.variant, arch=args.arch)
	qemu_args = qemu.kunit_arm64_args() if args.arch == 'arm64' else ()
	rows = workspace.kunit(args.tree, args.variant, arch=args.arch, qemu_args=qemu_args)
	print_rows(rows, f'; log and results.json in '
		   f'{workspace.kunit_dir(args.tree, args.variant, args.arch)}')
	sys.exit(1 if any(r[1] == 'fail' for r in rows) else 0)


def cmd_scenario(args):
	names = [args.name] if args.name != 'all' else list(scenarios.SCENARIOS)
	if not args.no_build:
		# a scenario's own kernel variant (acpi) unless one is asked for
		for arch, v in sorted({(scenarios.SCENARIOS[n]['arch'],
					args.variant or scenarios.SCENARIOS[n].get('variant', ''))
				       for n in names}):
			workspace.build_or_die(args.tree, v, prepare=not args.no_prepare, arch=arch)
	outroot = workspace.RUNS / 'scenarios'
	failed = 0
	for n in names:
		row = runs.run(n, args.tree, outroot, args.seed, args.variant, retry=not args.no_retry)
		_print_row(row)
		failed += row[1] == 'fail'
	print(f'{len(names) - failed} passed, {failed} failed; reports in {outroot}')
	sys.exit(1 if failed else 0)


def cmd_unit(args):
	"""The testbed's own unit tests (tests/), no build needed."""
	suite = unittest.defaultTestLoader.discover(str(workspace.TOOLS / 'tests'),
						    top_level_dir=str(workspace.TOOLS))
	r = unittest.TextTestRunner(verbosity=2 if args.verbose else 1).run(suite)
	sys.exit(0 if r.wasSuccessful() else 1)
