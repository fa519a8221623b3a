# SPDX-License-Identifier: GPL-2.0
"""make check: every test of the series, on ours and on the base.

The testbed's own unit tests first (tests/, over recorded guest output;
no build), then the static checks (no build either), then both kernels
are built, their KUnit suites run under kunit.py, and every QEMU scenario
boots on each. After our kernel's build come the checks of the series as
patches (series.py: export, git am, byte-identical to the tested tree,
checkpatch, get_maintainer, a build after every patch), the build bots'
configurations (configbuilds.py) and htmldocs, the fixes made for 6.1
and its kernel/time/ built with them, and the short stress boot
(stress.py: hotplug, hand-over, suspend, mixed, under the soak probe).
Then the same on arm64
(cross-built, KUnit and the arm64 scenarios under qemu-system-aarch64),
among them those of the kernel's own cpuidle-psci, the x86 kernels with
acpi_idle instead of the test driver (variant acpi and its scenario),
and our debug kernel. One line per test, then "N passed, N failed".
"""

import argparse
import posixpath
import re
import subprocess
import time
import unittest
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import configbuilds
import patchset
import qemu
import results
import runs
import scenarios
import series
import seriessteps
import stress
import workspace
from guestdata import Metrics
from progress import Failed, log
from results import Row, Status


def unit_tests() -> List[Row]:
	"""The testbed's unittest suite (tests/test_*.py), one row per test."""
	suite = unittest.defaultTestLoader.discover(str(workspace.TOOLS / 'tests'),
						    top_level_dir=str(workspace.TOOLS))
	rows: List[Row] = []

	class Rows(unittest.TestResult):
		def addSuccess(self, test: unittest.TestCase) -> None:
			rows.append(Row(f'unit/{test.id()}', Status.PASS, ''))

		def addFailure(self, test: unittest.TestCase, err: Any) -> None:
			# TestResult's own formatting (typeshed leaves the private
			# helper out)
			text = self._exc_info_to_string(err, test)  # type: ignore[attr-defined]
			rows.append(Row(f'unit/{test.id()}', Status.FAIL, text[-1500:]))

		addError = addFailure

		def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase,
			       err: Any) -> None:
			# a failed subtest fails its test, whose addSuccess never comes
			if err is not None:
				self.addFailure(subtest, err)

		def addSkip(self, test: unittest.TestCase, reason: str) -> None:
			rows.append(Row(f'unit/{test.id()}', Status.SKIP, reason))
	suite.run(Rows())
	return rows


def series_paths() -> List[str]:
	"""The series' own files, as repository paths."""
	return patchset.repo_paths(workspace.unpack_pristine())


def c_sources() -> List[str]:
	return [p for p in series_paths() if p.endswith('.c')]


def kerneldoc() -> List[Row]:
	"""scripts/kernel-doc -none -Wall on our C files and headers."""
	pristine = workspace.unpack_pristine()
	rows: List[Row] = []
	for rel in [p for p in series_paths() if p.endswith(('.c', '.h'))]:
		r = subprocess.run(['perl', 'scripts/kernel-doc', '-none', '-Wall',
				    str(workspace.REPO / rel)], capture_output=True, text=True,
				   cwd=pristine)
		out = (r.stdout + r.stderr).strip()
		rows.append(Row(f'static/kernel-doc/{rel}',
				Status.of(not out and not r.returncode), out[-1500:]))
	return rows


NONSTATIC_DEF = re.compile(r'^(?!static\b)(?:[a-z_][\w \*]*?)\b(\w+)\([^;{]*\)\n\{', re.M)


def function_texts(text: str) -> Dict[str, str]:
	"""{name: definition up to its closing brace} of the non-static
	functions in C source text."""
	out = {}
	for m in NONSTATIC_DEF.finditer(text):
		end = text.find('\n}\n', m.start())
		out[m.group(1)] = text[m.start():end if end >= 0 else len(text)]
	return out


def kerneldoc_coverage() -> List[Row]:
	"""Every non-static function of our kernel code has a kernel-doc
	comment, except upstream's that the series leaves as they are (the
	same definition in the pristine file)."""
	pristine = workspace.unpack_pristine()
	rows: List[Row] = []
	for rel in [p for p in c_sources() if '/tests/' not in p]:
		text = (workspace.REPO / rel).read_text()
		old = pristine / rel
		before = function_texts(old.read_text()) if old.exists() else {}
		upstream = {n for n, t in function_texts(text).items() if before.get(n) == t}
		missing: List[str] = []
		# A function defined twice under #ifdef is documented once.
		documented = set(re.findall(r'^/\*\*\n \* (\w+) - ', text, re.M))
		for m in NONSTATIC_DEF.finditer(text):
			if m.group(1) in documented or m.group(1) in upstream:
				continue
			head = text[:m.start()].rstrip()
			block = head[head.rfind('/*'):] if head.endswith('*/') else ''
			if not block.startswith('/**') or f' {m.group(1)} - ' not in block.split('\n')[1]:
				missing.append(m.group(1))
		rows.append(Row(f'static/kernel-doc-coverage/{rel}', Status.of(not missing),
				'no kernel-doc: ' + ', '.join(missing)))
	return rows


def included_sources(sources: Sequence[str], read: Callable[[str], str]) -> Set[str]:
	"""The C files among sources that another of them #includes.

	They are no objects of their own: they are checked as part of the
	file that includes them. read(path) gives a file's text.
	"""
	included = set()
	for rel in sources:
		d = posixpath.dirname(rel)
		for m in re.finditer(r'^#include "([^"]+\.c)"', read(rel), re.M):
			included.add(posixpath.normpath(posixpath.join(d, m.group(1))))
	return included & set(sources)


def sparse_w1(tree: str) -> List[Row]:
	"""sparse (C=2) and W=1 on the objects of our C files, in tree's build."""
	src = workspace.tree_dir(tree)
	rows: List[Row] = []
	sources = c_sources()
	skip = included_sources(sources, lambda rel: (workspace.REPO / rel).read_text())
	for rel in [s for s in sources if s not in skip]:
		obj = rel[:-2] + '.o'
		r = subprocess.run(['make', f'O={workspace.build_dir_name()}', 'CC=ccache gcc',
				    'C=2', 'W=1', obj], cwd=src, env=workspace.build_env(),
				   capture_output=True, text=True)
		bad = [ln for ln in (r.stdout + r.stderr).splitlines()
		       if re.search(r'warning:|error:', ln)]
		rows.append(Row(f'static/sparse-W1/{rel}', Status.of(not bad and not r.returncode),
				'\n'.join(bad[:10]) or r.stderr[-800:]))
	return rows


def series_checks(quick: bool = False) -> List[Row]:
	"""The series as patches, the build bots' configurations, htmldocs."""
	log('check: the series as git patches: export, git am, checkpatch, '
	    'get_maintainer' + ('' if quick else ', a build after every patch'))
	rows = series.check_rows(workspace, steps=not quick)
	if quick:
		return rows
	pristine = workspace.unpack_pristine()
	src = workspace.tree_dir('ours')
	ours = set(patchset.tree_files('ours', pristine))
	log(f'check: configurations ({", ".join(configbuilds.VARIANTS)}), W=1')
	rows += configbuilds.rows(src, src / workspace.build_dir_name() / '.config',
				  workspace.build_env(), workspace.JOBS, ours)
	log('check: make htmldocs SPHINXDIRS=timers')
	rows.append(configbuilds.htmldocs(src, workspace.build_env()))
	for base in [b for b in workspace.BASES if b != workspace.DEFAULT_BASE]:
		log(f'check: the fixes made for {base}, its kernel/time/ built with them, W=1')
		rows += series.other_base_rows(workspace, base)
	return rows


def step_kunit() -> List[Row]:
	"""The x86 KUnit suites on every step of the series that has them."""
	log('check: the x86_64 KUnit suites after every patch that has them')
	try:
		return seriessteps.check_rows()
	except Failed as e:
		return [Row('step/kunit', Status.FAIL, str(e))]


def cmd_check(args: argparse.Namespace) -> None:
	t0 = time.time()
	rows: List[Row] = []

	def emit(new: Sequence[Row]) -> None:
		results.print_rows(new)
		rows.extend(new)

	def build(tree: str, variant: str = '', arch: str = workspace.ARCH) -> bool:
		try:
			workspace.build(tree, variant, arch=arch)
			return True
		except Failed as e:
			emit([Row(f'build/{workspace.label(tree, variant, arch)}', Status.FAIL,
				  str(e))])
			return False

	def scenario_rows(names: Sequence[str], tree: str) -> None:
		for n in names:
			row = runs.run(n, tree, outroot)
			metrics[(n, tree)] = row.metrics
			emit([row])

	log('check: unit tests of the testbed (tests/)')
	emit(unit_tests())
	log('check: static checks (kernel-doc)')
	emit(kerneldoc())
	emit(kerneldoc_coverage())
	names = ['hpet-irqoff'] if args.quick else scenarios.names('x86_64', '')
	arm64 = [] if args.quick else scenarios.names('arm64', '')
	outroot = workspace.RUNS / 'check'
	metrics: Dict[Tuple[str, str], Optional[Metrics]] = {}
	for tree in workspace.TREES:
		if not build(tree):
			continue
		if tree == 'ours':
			log('check: sparse and W=1 on our C files')
			emit(sparse_w1(tree))
			emit(series_checks(quick=args.quick))
			if not args.quick:
				emit(step_kunit())
		emit(workspace.kunit(tree))
		scenario_rows(names, tree)
		if not args.quick:
			emit([stress.run('short', tree, outroot)])
	for tree in workspace.TREES if arm64 else ():
		if not build(tree, arch='arm64'):
			continue
		emit(workspace.kunit(tree, arch='arm64', qemu_args=qemu.kunit_arm64_args()))
		scenario_rows(arm64, tree)
	# acpi_idle: a kernel variant without the test driver (cpuidle-psci
	# is in the arm64 kernel, its scenarios ran above).
	real = [] if args.quick else [(a, v) for a in workspace.ARCHES
				      for v in scenarios.variants(a) if v]
	for arch, v in real:
		for tree in workspace.TREES:
			if build(tree, v, arch):
				scenario_rows(scenarios.names(arch, v), tree)
	real_names = [n for a, v in real for n in scenarios.names(a, v)]
	emit([scenarios.compare(n, metrics.get((n, 'ours')), metrics.get((n, 'base')))
	      for n in names + arm64 + real_names])
	# The debug kernel checks our locking and lifetimes (lockdep, KASAN,
	# timer objects). The base's debug boots are make stress's: they
	# cost a kernel build and five slow boots per check, and the base's
	# periodic mode crawls there under host load, its CPUs queued on
	# tick_broadcast_lock (see the README).
	debug = [] if args.quick else scenarios.DEBUG_SCENARIOS
	if debug and build('ours', 'debug'):
		emit(workspace.kunit('ours', 'debug'))
		for n in debug:
			emit([runs.run(n, 'ours', outroot, variant='debug')])
	print(f'\ncheck took {time.time() - t0:.0f} s; outputs: scenario reports and logs in '
	      f'{outroot}/<scenario>-<tree>/, KUnit in {workspace.RUNS}/kunit-<tree>/, '
	      f'build logs in {workspace.RUNS}/build-<tree>.log')
	print(results.summary(rows))
	raise SystemExit(results.exit_status(rows))
