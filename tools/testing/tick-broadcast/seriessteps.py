# SPDX-License-Identifier: GPL-2.0
"""Every step of the series, built and tested on its own.

  steps   checks out each patch of the series in turn (in
          $TB_CACHE/linux-<version>/series-steps, a worktree of the base
          repository) and builds it for x86_64 under QEMU; where the step
          has KUnit suites (kernel/time/tests/.kunitconfig), it runs them
          with 4 CPUs. With boot=True (tb.py series steps --boot) it also
          builds the step's scenario kernel, ours' configuration
          olddefconfig'd to the step, in BOOT_BUILD_DIR, and boots
          BOOT_SCENARIOS on it, judged as ours' boots are (runs.py); a step
          whose tree lacks what the scenario needs (BOOT_NEEDS: the test
          cpuidle driver, which the fixes at the head of the series come
          before) is skipped, saying so.
  proof   the standalone fixes against the regression suite: the base's
          test patches applied to the pristine tree, then the fixes one by
          one; after each, the devices suite runs, and the cases a fix
          names (series/series, "case=") must fail before it and pass after.
          proof(BASE) does it on another base (6.1), with the test
          patches and the fixes made for it (backport.py), in
          $TB_CACHE/linux-<its version>/series-steps.

  check_rows  make check's part: the steps' KUnit suites as above, one
          row per step (step/NN-slug/kunit), from the first step that
          has suites on; steps that change no source file are skipped.
          Two steps at a time, each in its own worktree (WORKTREES):
          their builds run side by side on a core each (a step's build
          is mostly make's walk of the tree and the link, both serial),
          then their suites run one after the other, alone on the host.

Each build directory is incremental across the steps, so a step that
changes kernel/time/ only rebuilds that and relinks. A missing one
starts as a copy of ours' scenario kernel's build (seed_build): the
step kernel has its configuration.
"""

import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import (AbstractSet, Callable, Iterable, Iterator, List, Optional, Sequence, Set,
		    Tuple)

import backport
import patchset
import runs
import workspace as ws
from arches import ARCHES
from kunitcmd import boot_args, kunit_py
from patchset import Patch
from results import Row, Status
from series import BRANCH, base_repo, base_worktree, commit_series
from stackgit import BASE_TAG, Failed, git, run_git
from progress import log, run_logged

KUNITCONFIG = 'kernel/time/tests/.kunitconfig'
BUILD_DIR = '.build-steps-x86_64'
# check_rows' worktrees: as many steps are built at once.
WORKTREES = ('series-steps', 'series-steps-2')
# boot=True: each step's scenario kernel, and the scenario booted on it
# (deterministic clock: about 10 s of boot, bounds independent of the
# host's load).
BOOT_BUILD_DIR = '.build-steps-boot-x86_64'
# The HPET under the deterministic clock, tight bounds; periodic mode
# (also under that clock, see scenarios.py); the PIT in wall-clock time.
BOOT_SCENARIOS = ('det-hpet-halt', 'periodic-halt', 'pit-halt')
# What the scenario needs of a step's tree, and what that is.
BOOT_NEEDS = {
	'kernel/time/test_timerstop.c':
		'the test cpuidle driver, whose timer-stopping state the scenario sleeps in',
}


def steps_worktree(workdir: Path, pristine: Path, name: str = WORKTREES[0]) -> Path:
	return base_worktree(base_repo(workdir, pristine, ''), workdir, name)


def seed_build(wt: Path) -> None:
	"""Start wt's missing step build directory as a copy of ours'
	scenario kernel's build, whose configuration the step kernel has
	(x86_64.config and the suites' fragment, kunit_args()).

	The copy's files are made newer than every source of wt, then the
	files the series sets that differ from ours' tree are made newer
	still: kbuild rebuilds those and what depends on them, and the
	symbols the step's Kconfig lacks (include/config/). Without a seed,
	the first step compiles the kernel through ccache, minutes of it.
	"""
	dst = wt / BUILD_DIR
	src = ws.tree_dir('ours') / ws.build_dir_name()
	if dst.exists() or not ws.kernel_image('ours').exists():
		return
	log(f'steps: {wt.name}: starting from the objects of ours')
	ours = ws.tree_dir('ours')

	def newer_than_sources(copy: Path) -> None:
		now = time.time()
		for root, _, files in os.walk(copy):
			for f in files:
				os.utime(os.path.join(root, f), (now, now), follow_symlinks=False)
		for path in ws.desired_files('ours', ws.unpack_pristine()):
			mine, theirs = wt / path, ours / path
			if mine.exists() and (not theirs.exists() or
					      mine.read_bytes() != theirs.read_bytes()):
				os.utime(mine, (now + 2, now + 2))

	ws.copy_dir(src, dst, newer_than_sources)


def defined_symbols(wt: Path) -> Set[str]:
	"""The Kconfig symbols the tree in wt defines, as checked out."""
	out = git(wt, 'grep', '-h', '-E', r'^\s*(menu)?config\s+\w+', '--', '*Kconfig*')
	return {line.split()[1] for line in out.splitlines()}


def known_lines(fragment: str, symbols: AbstractSet[str]) -> str:
	"""The lines of the config fragment (text) that set no symbol or one
	of symbols: kunit.py refuses a fragment that asks for a symbol the
	tree does not have yet (the test driver's and the suites' before
	their patches)."""
	keep = []
	for line in fragment.splitlines():
		m = re.match(r'(?:# )?CONFIG_(\w+)(?:=| is not set)', line)
		if not m or m.group(1) in symbols:
			keep.append(line)
	return '\n'.join(keep) + '\n'


def kunit_args(wt: Path, res: Path) -> List[str]:
	"""kunit.py arguments for the tree in wt as it is checked out; its
	fragment is written into res."""
	fragment = res / 'x86_64.config'
	fragment.write_text(known_lines((ws.CONFIGS / 'x86_64.config').read_text(),
					defined_symbols(wt)))
	args = ['--arch', 'x86_64', '--build_dir', BUILD_DIR, '--kunitconfig', str(fragment)]
	if (wt / KUNITCONFIG).exists():
		args += ['--kunitconfig', KUNITCONFIG]
	return args + ['--make_options', f'CC={ws.cc()}']


def build_and_test(wt: Path, name: str, suites: Sequence[str] = (),
		   kconfig_add: Sequence[str] = ()) -> List[Row]:
	"""Build wt, with the options kconfig_add (CONFIG_X=y) on top of its
	configuration; run its KUnit suites (all, or those globs) if it has
	any. Return test rows."""
	res = ws.RUNS / 'steps' / name
	res.mkdir(parents=True, exist_ok=True)
	args = kunit_args(wt, res)
	for option in kconfig_add:
		args += ['--kconfig_add', option]
	has_tests = (wt / KUNITCONFIG).exists()
	if not has_tests:
		args += ['--kunitconfig', str(ws.CONFIGS / 'steps-build.config')]
	cmd = kunit_py('build' if not has_tests else 'run', '--jobs', str(ws.JOBS), *args)
	if has_tests:
		cmd += boot_args('x86_64') + [f'--json={res / "results.json"}'] + list(suites)
	t0 = time.time()
	rc, _ = run_logged(cmd, res / 'output.log', f'step {name}', cwd=wt, env=ws.build_env())
	secs = time.time() - t0
	if not has_tests:
		return [Row(f'step/{name}/build', Status.of(not rc),
			    f'{secs:.0f} s, no KUnit suite yet; log {res}/output.log')]
	js = res / 'results.json'
	return ws.kunit_rows(js.read_text() if js.exists() else '',
			     (res / 'output.log').read_text(errors='replace'), f'step/{name}', res)


def boot_missing(exists: Callable[[str], bool]) -> str:
	"""Why a step's tree cannot boot BOOT_SCENARIOS, or '' if it can;
	exists(path) says whether the tree has that file."""
	return '; '.join(f'no {path} yet ({what})' for path, what in BOOT_NEEDS.items()
			 if not exists(path))


def boot_config() -> Path:
	"""The configuration of ours' scenario kernel as last built, made
	(kunit.py config) if ours was never configured."""
	cfg = ws.config_path('ours')
	return cfg if cfg.exists() else ws.configure('ours')


def build_boot_kernel(wt: Path, config: Path, logfile: Path) -> Tuple[Optional[Path], float]:
	"""Build the scenario kernel of the tree in wt, from config
	olddefconfig'd to the step, in wt/BOOT_BUILD_DIR; return
	(the image or None, seconds)."""
	bdir = wt / BOOT_BUILD_DIR
	bdir.mkdir(exist_ok=True)
	shutil.copyfile(config, bdir / '.config')
	make = ['make', f'ARCH={ws.ARCH}', f'O={BOOT_BUILD_DIR}', f'--jobs={ws.JOBS}',
		f'CC={ws.cc()}', 'olddefconfig', 'bzImage']
	rc, secs = run_logged(make, logfile, f'boot kernel {wt.name}', cwd=wt, env=ws.build_env(),
			      progress=ws.objects_compiled)
	image = bdir / ARCHES[ws.ARCH].image
	return (image if not rc and image.exists() else None), secs


def boot_step(wt: Path, name: str, config: Path) -> List[Row]:
	"""The rows step/NAME/boot/<scenario>: BOOT_SCENARIOS on the step's
	scenario kernel."""
	rows = [f'step/{name}/boot/{sc}' for sc in BOOT_SCENARIOS]
	why = boot_missing(lambda path: (wt / path).exists())
	if why:
		return [Row(row, Status.SKIP, f'cannot boot: {why}') for row in rows]
	res = ws.RUNS / 'steps' / name
	logfile = res / 'boot-build.log'
	image, secs = build_boot_kernel(wt, config, logfile)
	if not image:
		return [Row(rows[0], Status.FAIL,
			    f'scenario kernel build failed in {secs:.0f} s, log {logfile}:\n'
			    + '\n'.join(ws.make_errors(logfile)))]
	out: List[Row] = []
	for sc, row in zip(BOOT_SCENARIOS, rows):
		r = runs.run_kernel(image, sc, 'ours', row, res / f'boot-{sc}')
		out.append(Row(row, r.status, f'{r.detail}; kernel built in {secs:.0f} s; '
			       f'report {r.outdir}/report.txt'))
	return out


def each_step(first: int = 1, last: Optional[int] = None) -> Iterator[Tuple[Patch, Path, str]]:
	"""(patch, worktree, name) for steps first..last of the series (patch
	numbers), the worktree checked out at the step as it is yielded."""
	pristine = ws.unpack_pristine()
	repo = base_repo(ws.workdir(), pristine, ws.kernel_version(pristine))
	commit_series(repo, pristine)
	wt = steps_worktree(ws.workdir(), pristine)
	commits = git(repo, 'rev-list', '--reverse', f'{BASE_TAG}..{BRANCH}').split()
	for p, commit in zip(patchset.patches_for('ours'), commits):
		if p.number < first or (last and p.number > last):
			continue
		git(wt, 'checkout', '-q', '-f', '--detach', commit)
		name = f'{p.number:02d}-{p.slug}'
		log(f'steps: {name}')
		seed_build(wt)
		yield p, wt, name


def steps(first: int = 1, last: Optional[int] = None, boot: bool = False) -> List[Row]:
	"""Rows for steps first..last of the series (patch numbers); boot:
	with boots of BOOT_SCENARIOS each."""
	config = boot_config() if boot else None
	rows = []
	for p, wt, name in each_step(first, last):
		rows += build_and_test(wt, name)
		if config is not None:
			rows += boot_step(wt, name, config)
	return rows


# A patch that changes nothing under these builds what the step before
# it built.
SOURCE_DIRS = ('arch/', 'drivers/', 'include/', 'kernel/', 'lib/')


def changes_source(paths: Iterable[str]) -> bool:
	"""Whether a patch changing these tree paths changes what is built."""
	return any(path.startswith(SOURCE_DIRS) or path.endswith(('Kconfig', 'Makefile'))
		   for path in paths)


def summary_row(name: str, case_rows: Sequence[Row], secs: float) -> Row:
	"""The row step/NAME/kunit for a step's KUnit cases: it fails if a
	case failed (and names them) or none ran."""
	failed = [r.name.split('/', 2)[-1] for r in case_rows if r.status is Status.FAIL]
	counts = {st: sum(1 for r in case_rows if r.status is st) for st in Status}
	detail = (f'{counts[Status.PASS]} passed, {counts[Status.FAIL]} failed, '
		  f'{counts[Status.SKIP]} skipped in {secs:.0f} s')
	if failed:
		detail += ': ' + ', '.join(failed[:10]) + '\n' + '\n'.join(
			r.detail for r in case_rows if r.status is Status.FAIL)[:1500]
	return Row(f'step/{name}/kunit', Status.of(not failed and counts[Status.PASS] > 0), detail)


def build_step(wt: Path, name: str, jobs: int) -> Tuple[int, float]:
	"""Build the step checked out in wt: (exit status, seconds).

	kunit.py config (which checks that the fragments took), then make's
	kernel image alone: kunit.py build would also run olddefconfig a
	second time, build the modules and write compile_commands.json, a
	quarter of an incremental step's build.
	"""
	res = ws.RUNS / 'steps' / name
	res.mkdir(parents=True, exist_ok=True)
	rc, secs = run_logged(kunit_py('config', *kunit_args(wt, res)), res / 'config.log',
			      f'step {name}: kunit.py config', cwd=wt, env=ws.build_env())
	if rc:
		shutil.copyfile(res / 'config.log', res / 'build.log')
		return rc, secs
	image = Path(ARCHES['x86_64'].image).name
	make = ['make', 'ARCH=x86_64', f'O={BUILD_DIR}', f'--jobs={jobs}', f'CC={ws.cc()}', image]
	rc, more = run_logged(make, res / 'build.log', f'step {name}: make {image}', cwd=wt,
			      env=ws.build_env())
	return rc, secs + more


def exec_step(wt: Path, name: str) -> Tuple[List[Row], float]:
	"""The step's KUnit suites, as build_step() left them in wt: (case
	rows, seconds)."""
	res = ws.RUNS / 'steps' / name
	js = res / 'results.json'
	js.unlink(missing_ok=True)
	cmd = kunit_py('exec', '--arch', 'x86_64', '--build_dir', BUILD_DIR,
		       *boot_args('x86_64'), f'--json={js}')
	_, secs = run_logged(cmd, res / 'output.log', f'step {name}: KUnit', cwd=wt,
			     env=ws.build_env())
	return ws.kunit_rows(js.read_text() if js.exists() else '',
			     (res / 'output.log').read_text(errors='replace'), f'step/{name}',
			     res), secs


def tested_steps() -> Tuple[List[Tuple[str, str]], List[Row]]:
	"""([(commit, name)] of the steps check_rows tests, [rows of those it
	skips]): those that have KUnit suites and change a source file."""
	pristine = ws.unpack_pristine()
	repo = base_repo(ws.workdir(), pristine, ws.kernel_version(pristine))
	commit_series(repo, pristine)
	commits = git(repo, 'rev-list', '--reverse', f'{BASE_TAG}..{BRANCH}').split()
	todo: List[Tuple[str, str]] = []
	skipped: List[Row] = []
	for p, commit in zip(patchset.patches_for('ours'), commits):
		name = f'{p.number:02d}-{p.slug}'
		if run_git(repo, 'cat-file', '-e', f'{commit}:{KUNITCONFIG}').returncode:
			continue
		if not changes_source(patchset.diff_paths(p.diff_text())):
			skipped.append(Row(f'step/{name}/kunit', Status.SKIP,
					   'changes no source file: the step before it was tested'))
		else:
			todo.append((commit, name))
	return todo, skipped


def check_rows() -> List[Row]:
	"""make check's rows: one per step that has KUnit suites and changes
	a source file, its suites run on x86_64 (4 CPUs) as the step leaves
	the tree. The steps before the suites are built by the series check;
	a step that changes only documentation builds what the one before it
	did. len(WORKTREES) steps at a time: built side by side, tested one
	after the other."""
	todo, rows = tested_steps()
	pristine = ws.unpack_pristine()
	wts = [steps_worktree(ws.workdir(), pristine, n) for n in WORKTREES]
	for i in range(0, len(todo), len(wts)):
		batch = list(zip(wts, todo[i:i + len(wts)]))
		for wt, (commit, name) in batch:
			git(wt, 'checkout', '-q', '-f', '--detach', commit)
			log(f'steps: {name} in {wt.name}')
			seed_build(wt)
		jobs = max(1, ws.JOBS // len(batch))
		with ThreadPoolExecutor(len(batch)) as pool:
			built = list(pool.map(lambda b: build_step(b[0], b[1][1], jobs), batch))
		for (wt, (_, name)), (rc, secs) in zip(batch, built):
			if rc:
				logfile = ws.RUNS / 'steps' / name / 'build.log'
				rows.append(Row(f'step/{name}/kunit', Status.FAIL,
						f'build failed in {secs:.0f} s, log {logfile}:\n'
						+ '\n'.join(ws.make_errors(logfile))))
				continue
			case_rows, run_secs = exec_step(wt, name)
			rows.append(summary_row(name, case_rows, secs + run_secs))
	return sorted(rows, key=lambda r: r.name)


Diffs = List[Tuple[Patch, str]]


def proof_patches(base: str, prefix: str) -> Tuple[Diffs, Diffs, List[Row]]:
	"""([(test patch, its diff)], [(fix, its diff)], rows) for base: the
	series' own on its base; on another, each made for it (backport.py:
	the test patches on top of each other, each fix alone), and a failed
	row prefix/SLUG for each fix that cannot be (the others are proven
	without it). Raises Failed if a test patch cannot be."""
	all_patches = patchset.load()
	fixes = [p for p in all_patches if p.fix]
	tooling = patchset.patches_for('base', all_patches)
	if base == ws.DEFAULT_BASE:
		return ([(p, p.diff_text()) for p in tooling], [(p, p.diff_text()) for p in fixes],
			[])
	old, new = ws.unpack_pristine(), ws.unpack_pristine(base)
	names = (ws.DEFAULT_BASE, base)
	try:
		made = backport.port_stack(tooling, old, new, names)
	except patchset.SeriesError as e:
		raise Failed(f'the test patches cannot be made for {base}: {e}') from None
	ported: List[backport.Ported] = []
	rows: List[Row] = []
	for p in fixes:
		try:
			ported.append(backport.port_fix(p, old, new, names=names))
		except patchset.SeriesError as e:
			rows.append(Row(f'{prefix}/{p.slug}', Status.FAIL, f'not proven: {e}'))
	for f in made + ported:
		log(f'proof: {base}: {f.describe()}')
	return ([(f.patch, f.mail.diff) for f in made], [(f.patch, f.mail.diff) for f in ported],
		rows)


# The proof on another base than the series' own needs only the devices
# suite: the benchmark suite, which needs KUNIT_CASE_SLOW (6.6), stays out.
OTHER_BASE_CONFIG = ('CONFIG_TICK_BROADCAST_BENCH_KUNIT_TEST=n',)


def proof(base: str = ws.DEFAULT_BASE) -> List[Row]:
	"""Rows: every fix's cases fail before it and pass after it, on base
	(another than the series' own: the fixes and test patches made for it)."""
	pristine = ws.unpack_pristine(base)
	wt = steps_worktree(ws.workdir(base), pristine)
	git(wt, 'checkout', '-q', '-f', '--detach', BASE_TAG)
	git(wt, 'clean', '-q', '-f', '-d')
	other = '' if base == ws.DEFAULT_BASE else f'-{base}'
	tooling, fixes, unported = proof_patches(base, f'series/proof{other}')
	rows = list(unported)
	for p, diff in tooling:
		apply_to(wt, p, diff)
	failing: Set[str] = set()
	for i in range(len(fixes) + 1):
		if i:
			apply_to(wt, *fixes[i - 1])
		name = f'proof{other}-{i:02d}' + (f'-{fixes[i - 1][0].slug}' if i else '-base')
		got = build_and_test(wt, name, ['tick_broadcast_devices*'],
				     () if base == ws.DEFAULT_BASE else OTHER_BASE_CONFIG)
		if not i and all(r.name.endswith('/run') for r in got):
			# nothing ran on the base: no fix can be proven
			errors = ws.make_errors(ws.RUNS / 'steps' / name / 'output.log')
			return rows + got + [Row(f'series/proof{other}/all-fixed', Status.FAIL,
						 f'the devices suite did not run on {base} with '
						 'the test patches alone:\n' + '\n'.join(errors))]
		now = {r.name.split('/', 2)[-1] for r in got if r.status is Status.FAIL}
		if i:
			rows.append(proof_row(fixes[i - 1][0], failing, now, f'series/proof{other}'))
		failing = now
	return rows + [all_fixed_row(f'series/proof{other}', failing, unported)]


def all_fixed_row(prefix: str, failing: AbstractSet[str], unported: Sequence[Row]) -> Row:
	"""With every fix: no case fails, and no fix failed to be made for
	the base (unported: those fixes' rows)."""
	if failing:
		return Row(f'{prefix}/all-fixed', Status.FAIL,
			   'still failing: ' + ', '.join(sorted(failing)))
	if unported:
		return Row(f'{prefix}/all-fixed', Status.FAIL,
			   'not made for the base: ' + ', '.join(r.name.rsplit('/', 1)[-1]
								 for r in unported))
	return Row(f'{prefix}/all-fixed', Status.PASS, 'every case passes')


def proof_row(fix: Patch, before: AbstractSet[str], after: AbstractSet[str],
	      prefix: str = 'series/proof') -> Row:
	"""The fix's cases failed before it and pass after it, and nothing
	else changed (before, after: the names of the failing rows)."""
	fixed = before - after
	missing = [c for c in fix.cases if not any(c in r for r in fixed)]
	other = [r for r in fixed if not any(c in r for c in fix.cases)] + sorted(after - before)
	bad = missing + other
	if not fix.cases:
		return Row(f'{prefix}/{fix.slug}', Status.FAIL if other else Status.SKIP,
			   'names no case of the regression suite' +
			   (f'; but: {", ".join(other)}' if other else ''))
	return Row(f'{prefix}/{fix.slug}', Status.of(not bad),
		   f'fails before it, passes after: {", ".join(fix.cases) or "no case named"}'
		   + (f'; but: {", ".join(bad)}' if bad else ''))


def apply_to(wt: Path, p: Patch, diff: Optional[str] = None) -> None:
	"""git apply p (or diff, its version for wt's base) in wt, to the
	index too: defined_symbols() reads the Kconfig files the index has."""
	r = subprocess.run(['git', '-C', str(wt), 'apply', '--index', '-p1', '-'],
			   input=p.diff_text() if diff is None else diff, capture_output=True, text=True)
	if r.returncode:
		raise Failed(f'{p.slug} does not apply: {r.stderr[-1500:]}')
