# SPDX-License-Identifier: GPL-2.0
"""The small commands of tb.py: deps, prepare, build, initramfs, report,
kunit, scenario, unit. Each ends by printing where its outputs are and
exits non-zero when something it checked failed.
"""

import argparse
import shutil
import sys
import unittest
from typing import List, Sequence

import layers
import patchset
import qemu
import report
import results
import runs
import scenarios
import workspace
from guestdata import Metrics
from progress import log
from results import Row


def cmd_deps(_args: argparse.Namespace) -> None:
	workspace.install_deps()
	log('deps: every package is installed')


def cmd_prepare(_args: argparse.Namespace) -> None:
	dirs = workspace.prepare_all()
	log(f'prepare: trees at {", ".join(map(str, dirs))}')


def cmd_build(args: argparse.Namespace) -> None:
	for tree in args.trees:
		workspace.build_or_die(tree, args.variant, prepare=not args.no_prepare,
				       arch=args.arch)
	log(f'build: logs in {workspace.RUNS}/build-<tree>.log')


def cmd_initramfs(_args: argparse.Namespace) -> None:
	print(qemu.initramfs())


def _print_row(row: Row[Metrics]) -> None:
	assert row.outdir is not None		# runs.run() always sets it
	print((row.outdir / 'report.txt').read_text())
	print(f'{row.status.name} {row.name}: {row.detail}')
	print(f'logs: {row.outdir} (console.log, data.log, qemu.cmd, report.txt)\n')


def cmd_report(args: argparse.Namespace) -> None:
	"""Boot report.SCENARIO on tree under the deterministic clock and print
	report.text(); fail if a verdict does."""
	workspace.build_or_die(args.tree)
	sc = report.scenario()
	out = workspace.RUNS / 'report' / f'{report.SCENARIO}-{args.tree}'
	boot = runs.boot_scenario(workspace.kernel_image(args.tree), sc, out,
				  what=f'report/{args.tree}')
	checks, _, _ = runs.judge(args.tree, sc, out, boot, timing=True)
	text = report.text(args.tree, sc, boot.status, boot.console, boot.data, checks)
	(out / 'make-report.txt').write_text(text + '\n')
	print(f'\n{text}\n\nlogs: {out} (console.log, data.log, qemu.cmd, make-report.txt)')
	sys.exit(0 if all(c.ok for c in checks) else 1)


def print_rows(rows: Sequence[Row], where: str = '') -> None:
	"""One line per test row, a failure's detail under it, and the count."""
	results.print_rows(rows)
	print(results.summary(rows) + where)


def cmd_kunit(args: argparse.Namespace) -> None:
	workspace.build_or_die(args.tree, args.variant, arch=args.arch)
	qemu_args = qemu.kunit_arm64_args() if args.arch == 'arm64' else ()
	rows = workspace.kunit(args.tree, args.variant, arch=args.arch, qemu_args=qemu_args)
	print_rows(rows, f'; log and results.json in '
		   f'{workspace.kunit_dir(args.tree, args.variant, args.arch)}')
	sys.exit(results.exit_status(rows))


def cmd_scenario(args: argparse.Namespace) -> None:
	names = [args.name] if args.name != 'all' else list(scenarios.SCENARIOS)
	if not args.no_build:
		# a scenario's own kernel variant (acpi) unless one is asked for
		for arch, v in sorted({(scenarios.SCENARIOS[n].arch,
					args.variant or scenarios.SCENARIOS[n].variant)
				       for n in names}):
			workspace.build_or_die(args.tree, v, prepare=not args.no_prepare, arch=arch)
	outroot = workspace.RUNS / 'scenarios'
	rows: List[Row[Metrics]] = []
	for n in names:
		row = runs.run(n, args.tree, outroot, args.seed, args.variant, retry=not args.no_retry)
		_print_row(row)
		rows.append(row)
	print(f'{results.summary(rows)}; reports in {outroot}')
	sys.exit(results.exit_status(rows))


def cmd_unit(args: argparse.Namespace) -> None:
	"""The testbed's own unit tests (tests/), no build needed."""
	suite = unittest.defaultTestLoader.discover(str(workspace.TOOLS / 'tests'),
						    top_level_dir=str(workspace.TOOLS))
	r = unittest.TextTestRunner(verbosity=2 if args.verbose else 1).run(suite)
	sys.exit(0 if r.wasSuccessful() else 1)


def cmd_list(args: argparse.Namespace) -> None:
	"""The lists the README does not keep by hand."""
	if args.what == 'scenarios':
		for name, sc in scenarios.SCENARIOS.items():
			clock = 'deterministic' if scenarios.ICOUNT[0] in sc.qemu else 'wall clock'
			print(f'{name:22} {sc.arch:7} {sc.variant or "-":5} {clock:13} {sc.doc}')
	elif args.what == 'layers':
		g = layers.graph()
		for m in layers.ordered():
			print(f'{m}: {layers.summary(m)}')
			print(f'    imports: {" ".join(sorted(g[m])) or "nothing of the testbed"}')
	else:
		for p in patchset.load():
			flags = ' '.join(w for w in p.words() if '=' not in w)
			print(f'{p.number:2} {flags or "-":4} {p.message()[0]}')
