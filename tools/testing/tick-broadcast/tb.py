#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tb: the command line of the tick broadcast testbed.

  tb.py deps                    install missing Debian packages
  tb.py prepare                 unpack the base, make the trees ours/ and base/
  tb.py build [TREE...]         build TREEs (ours, base) for QEMU (--arch arm64)
  tb.py initramfs               busybox + tbprobe initramfs
  tb.py report [TREE]           boot once with the deep state, print a report
  tb.py kunit TREE              KUnit suites of TREE under QEMU (kunit.py)
  tb.py scenario NAME [TREE]    run one QEMU scenario (or "all")
  tb.py unit                    the testbed's own unit tests (no build)
  tb.py list scenarios|layers|patches   what there is
  tb.py check [--quick]         everything: unit, static, series, KUnit, scenarios
  tb.py bench [--runs N] [--part coalesce]   ours against the base, side by side
  tb.py stress [--kinds K,..] [--variants V,..] [--short]   long runs (stress.py)
  tb.py series [--part fixes [--kernel 6.1]] [--base TREE]   the series as git patches
  tb.py series absorb          fold edits at kernel paths into their patches
  tb.py series range-diff OLD [NEW]   the series at two commits, patch by patch
  tb.py series edit|save        the series as a git branch to work on, and back
  tb.py series steps|proof [--kernel 6.1]   every step built and tested; the fixes proven
  tb.py series steps --boot     ...and a scenario booted on every step

This file only builds the command line and dispatches. The layers below:

  results     test rows, their statuses, the summary line
  arches      what differs between the architectures
  progress    messages, logged commands with a heartbeat
  kunitcmd    kunit.py's command lines
  workspace   packages, trees (via patchset), builds, KUnit runs
  qemu        initramfs, boot, watchdog, monitor
  guestdata   parsing of everything the guest reports
  scenarios   scenario definitions and their verdicts
  hops        where late wakeups lose their time (trace analysis)
  runs        boot a scenario and judge it
  commands, check, bench   the commands

Everything that is not the repository lives in $TB_CACHE
(default ~/.cache/tick-broadcast); see workspace.py.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench		# noqa: E402
import check		# noqa: E402
import commands		# noqa: E402
import scenarios	# noqa: E402
import series		# noqa: E402
import absorb		# noqa: E402
import rangediff	# noqa: E402
import seriesedit	# noqa: E402
import seriessteps	# noqa: E402
import stress		# noqa: E402
import workspace	# noqa: E402
import patchset		# noqa: E402
import results		# noqa: E402
from progress import Failed	# noqa: E402


def parser() -> argparse.ArgumentParser:
	p = argparse.ArgumentParser(description=__doc__,
				    formatter_class=argparse.RawDescriptionHelpFormatter)
	sub = p.add_subparsers(dest='cmd', required=True)
	sub.add_parser('deps', help='install missing Debian packages').set_defaults(
		fn=commands.cmd_deps)
	sub.add_parser('prepare', help='make the trees ours/ and base/').set_defaults(
		fn=commands.cmd_prepare)
	b = sub.add_parser('build', help='build kernels')
	b.add_argument('trees', nargs='*', choices=workspace.TREES, default=['ours'])
	b.add_argument('--variant', default='', help='e.g. debug (configs/debug.config)')
	b.add_argument('--arch', default=workspace.ARCH, choices=workspace.ARCHES)
	b.add_argument('--no-prepare', action='store_true',
		       help='build the workspace tree as it is (keep hand edits)')
	b.set_defaults(fn=commands.cmd_build)
	sub.add_parser('initramfs', help='build the initramfs').set_defaults(
		fn=commands.cmd_initramfs)
	r = sub.add_parser('report', help='boot once under the deterministic clock, print what '
					  'the broadcast did')
	r.add_argument('tree', nargs='?', default='ours', choices=workspace.TREES)
	r.set_defaults(fn=commands.cmd_report)
	k = sub.add_parser('kunit', help='the KUnit suites of a tree')
	k.add_argument('tree', choices=workspace.TREES)
	k.add_argument('--variant', default='')
	k.add_argument('--arch', default=workspace.ARCH, choices=workspace.ARCHES)
	k.set_defaults(fn=commands.cmd_kunit)
	s = sub.add_parser('scenario', help='run a QEMU scenario')
	s.add_argument('name', choices=list(scenarios.SCENARIOS) + ['all'])
	s.add_argument('tree', nargs='?', default='ours', choices=workspace.TREES)
	s.add_argument('--seed', type=int, default=1)
	s.add_argument('--variant', default='', help='e.g. debug (configs/debug.config)')
	s.add_argument('--no-build', action='store_true', help='boot the kernel as built')
	s.add_argument('--no-prepare', action='store_true',
		       help='build the workspace tree as it is (keep hand edits)')
	s.add_argument('--no-retry', action='store_true',
		       help='do not boot again after a failure on timing only')
	s.set_defaults(fn=commands.cmd_scenario)
	li = sub.add_parser('list', help='the scenarios, the modules, or the patches')
	li.add_argument('what', choices=['scenarios', 'layers', 'patches'])
	li.set_defaults(fn=commands.cmd_list)
	u = sub.add_parser('unit', help="the testbed's own unit tests (no build)")
	u.add_argument('-v', '--verbose', action='store_true')
	u.set_defaults(fn=commands.cmd_unit)
	c = sub.add_parser('check', help='unit, static, KUnit and scenarios on both trees')
	c.add_argument('--quick', action='store_true', help='one scenario only')
	c.set_defaults(fn=check.cmd_check)
	e = sub.add_parser('bench', help='ours against the base, side by side')
	e.add_argument('--runs', type=int, default=bench.RUNS,
		       help=f'boots per kernel and workload (default {bench.RUNS})')
	e.add_argument('--scaling-runs', type=int, default=bench.SCALING_RUNS,
		       help=f'boots per kernel and -smp value (default {bench.SCALING_RUNS})')
	e.add_argument('--workloads', default='',
		       help=f'comma-separated subset of {",".join(bench.WORKLOADS)} (default: all)')
	e.add_argument('--part', choices=bench.PARTS_RUN, default='all',
		       help='coalesce: only the coalescing boots; deterministic: only the '
			    'QEMU -icount boots; storm: only the wake-up storm (default all)')
	e.set_defaults(fn=bench.cmd_bench)
	t = sub.add_parser('stress', help='hotplug, s2idle, hand-over, soak; debug, KCSAN')
	t.add_argument('--kinds', default='', help=f'subset of {",".join(stress.FULL)} '
		       '(default: all on the plain kernels, the short boot on the variants)')
	t.add_argument('--variants', default=None,
		       help='comma-separated kernels: "" (plain), debug, kcsan (default: all three)')
	t.add_argument('--trees', default='', help='ours,base (default: both)')
	t.add_argument('--short', action='store_true', help='the make check boot everywhere')
	t.add_argument('--scale', type=float, default=1.0, help='multiply cycles and seconds')
	t.add_argument('--seed', type=int, default=1)
	t.add_argument('--no-prepare', action='store_true',
		       help='build the workspace tree as it is (keep hand edits)')
	t.set_defaults(fn=stress.cmd_stress)
	z = sub.add_parser('series', help='export, edit or save the series')
	z.add_argument('action', nargs='?', default='export',
		       choices=['export', 'absorb', 'range-diff', 'edit', 'save', 'steps', 'proof'])
	z.add_argument('revs', nargs='*', metavar='REV',
		       help='range-diff: OLD [NEW], commits of this repository (NEW: the '
			    'working tree); what follows -- goes to git range-diff')
	z.add_argument('--first', type=int, default=1, help='steps: from this patch')
	z.add_argument('--last', type=int, default=0, help='steps: up to this patch')
	z.add_argument('--boot', action='store_true',
		       help=f'steps: also build each step\'s scenario kernel and boot '
			    f'{", ".join(seriessteps.BOOT_SCENARIOS)} on it (from the test cpuidle driver on)')
	z.add_argument('--part', default='all', choices=series.PARTS,
		       help='fixes: only the standalone fixes of the base, which apply to it alone')
	z.add_argument('--base', metavar='TREE', help='git am the exported series onto TREE')
	z.add_argument('--kernel', default=workspace.DEFAULT_BASE, choices=list(workspace.BASES),
		       help='the base the patches are for: another than '
			    f'{workspace.DEFAULT_BASE} takes only the fixes (--part fixes), '
			    'each made for it; proof: the base to prove the fixes on')
	z.add_argument('--verify', action='store_true', help='the checks make check runs on it')
	z.add_argument('--manifest', action='store_true', help='rewrite series/base-files.sha256')
	z.add_argument('--force', action='store_true', help='edit: drop unsaved commits')
	z.set_defaults(fn=cmd_series)
	return p


def cmd_series(args: argparse.Namespace) -> None:
	if args.action == 'export':
		series.cmd_series(args, workspace)
	elif args.action in ('edit', 'save', 'absorb', 'range-diff'):
		try:
			edit_series(args)
		except (Failed, patchset.SeriesError) as e:
			raise SystemExit(f'series: {args.action}: {e}')
	else:
		try:
			rows = (seriessteps.steps(args.first, args.last or None, boot=args.boot)
				if args.action == 'steps' else seriessteps.proof(args.kernel))
		except Failed as e:
			raise SystemExit(f'series: {args.action}: {e}')
		commands.print_rows(rows)
		sys.exit(results.exit_status(rows))


def edit_series(args: argparse.Namespace) -> None:
	"""The series' editing actions: absorb, range-diff, edit, save."""
	pristine = workspace.unpack_pristine()
	if args.action == 'absorb':
		done = absorb.absorb(pristine)
		for t in done:
			assert t.patch is not None	# absorb() raises for a hunk without one
			print(f'series: {t.hunk.lines()}: into {t.patch.slug}.patch ({t.why})')
		print(f'series: absorbed {len(done)} hunks; the kernel paths and the series agree'
		      if done else 'series: nothing to absorb: the kernel paths and the series agree')
	elif args.action == 'range-diff':
		revs = args.revs
		if not 1 <= len(revs) <= 2:
			raise SystemExit('series: range-diff OLD [NEW]')
		old, new = revs[0], revs[1] if len(revs) > 1 else None
		print(f'series: {rangediff.label(old)} against {rangediff.label(new)}', flush=True)
		sys.stdout.write(rangediff.range_diff(pristine, old, new, args.git_args))
	elif args.action == 'edit':
		wt = seriesedit.edit(workspace.workdir(), pristine, args.force)
		print(f'series: branch {seriesedit.EDIT_BRANCH} in {wt}, one commit per patch; '
		      f'work there with git, then "tb.py series save"')
	else:
		patches = seriesedit.save(workspace.workdir(), pristine)
		print(f'series: saved {len(patches)} patches into {patchset.SERIES_DIR}')


def main() -> None:
	argv = sys.argv[1:]
	git_args = argv[argv.index('--') + 1:] if '--' in argv else []
	args = parser().parse_args(argv[:len(argv) - len(git_args)] if git_args else argv)
	args.git_args = git_args
	if args.cmd == 'unit':
		workspace.install_deps(workspace.UNIT_DEPENDS)
	elif args.cmd not in ('deps', 'list'):
		workspace.install_deps()
	args.fn(args)


if __name__ == '__main__':
	main()
