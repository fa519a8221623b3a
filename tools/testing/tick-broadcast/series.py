# SPDX-License-Identifier: GPL-2.0
"""The series as git patches: export, apply, and the checks on them.

  export      the series as `git format-patch` files with a cover letter,
              made as commits on a git repository of the pristine base
  verify      `git am` the exported files onto a fresh checkout of the
              base, compare the result with the tree the tests used, build
              kernel/time/ and drivers/cpuidle/ after every patch, run
              checkpatch --strict on every patch and get_maintainer.pl on
              every new file, and run the in-tree KUnit command on UML
  apply       `git am` the series onto a kernel tree of the user's, after
              checking that every file the series replaces or patches is
              the one it was made against (series/base-files.sha256)

Everything lives under the workspace: $TB_CACHE/linux-<version>/series-git
(the base as a git repository, one commit, and the series as a branch),
.../series-am (a worktree where verify applies the files), and
$TB_CACHE/series/ (the exported files).

The fixes alone also go to another base than the series' (6.1): export
then takes their versions for it (backport.py) and that base's
repository ($TB_CACHE/linux-<its version>/series-git), and writes them
to $TB_CACHE/series-fixes-<base>/.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import AbstractSet, Collection, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import backport
import configbuilds
import patchset
import results
import stackgit
from kunitcmd import UML_ARGS, kunit_py
from patchset import Mail, Patch
from results import Row, Status
from progress import run_logged
from stackgit import BASE_TAG, Failed, git

BRANCH = 'tb-series'
MANIFEST = patchset.SERIES_DIR / 'base-files.sha256'
# The objects every patch must leave buildable.
STEP_TARGETS = ['kernel/time/', 'drivers/cpuidle/']
# Checkpatch types left out, with why:
#  FILE_PATH_CHANGES: "does MAINTAINERS need updating?" on every added
#   file; every new file is checked against MAINTAINERS by get_maintainer
#   (series/maintainers) instead, which is the stronger test.
#  OPEN_ENDED_LINE, PARENTHESIS_ALIGNMENT (trace event headers only): the
#   tracing macros are laid out as in every header of include/trace/events/.
# UNKNOWN_COMMIT_ID: the base repository is made from Debian's source
# tarball, without upstream's history, so checkpatch cannot look up the
# commits that Fixes: tags name.
CHECKPATCH_IGNORE = ['FILE_PATH_CHANGES', 'UNKNOWN_COMMIT_ID']
# Keywords match words in comments (a mention of riscv), not ownership.
GET_MAINTAINER = ['scripts/get_maintainer.pl', '--no-git', '--no-git-fallback', '--no-keywords']
CHECKPATCH_IGNORE_TRACE = ['OPEN_ENDED_LINE', 'PARENTHESIS_ALIGNMENT']
# A patch that adds or changes a trace header (TRACE_EVENT() layout).
TRACE_HEADER = r'^\+\+\+ b/(include/trace/events/\S+|\S+-trace\.h)$'
# Single findings allowed, by type and the line they point at: the result
# names are one X-macro list (as TICK_DEP_NAMES in include/linux/tick.h),
# which is a sequence of invocations by design, and the trace header
# turns each into TRACE_DEFINE_ENUM(...); as include/trace/events/timer.h
# does. Anything else of the same type still fails.
CHECKPATCH_ALLOWED = {
	'COMPLEX_MACRO': r'^\+#define TICK_BC_(ENTER_RESULTS|EXIT_ACTIONS|OWNER_REASONS|DEVICE_ROLES)\s',
	# A trace header outside include/trace/events names its directory
	# relative to it, and its file, as drivers' trace headers do.
	'SPACING': r'^\+#define TRACE_INCLUDE_(PATH \.\./\.\./\S+|FILE [\w-]+)$',
	'TRAILING_SEMICOLON': r'^\+#define tick_bc_name\(e, \.\.\.\)\s+TRACE_DEFINE_ENUM\(e\);',
}


def identity() -> str:
	"""'Name <email>' of git's own configured identity."""
	r = subprocess.run(['git', 'var', 'GIT_COMMITTER_IDENT'], capture_output=True, text=True)
	m = re.match(r'(.+ <[^>]+>)', r.stdout)
	if r.returncode or not m or not subprocess.run(
			['git', 'config', 'user.email'], capture_output=True).stdout.strip():
		raise Failed('git has no identity to sign the patches off with: set '
			     'git config --global user.name "Your Name" and user.email')
	return m.group(1)


# ---------------------------------------------------------------- base repository

def base_repo(workdir: Path, pristine: Path, version: str) -> Path:
	"""The pristine base as a git repository with one commit, tagged tb-base."""
	repo = workdir / 'series-git'
	if (repo / '.git').exists() and git(repo, 'tag', '-l', BASE_TAG, check=False):
		return repo
	tmp = workdir / 'series-git.tmp'
	shutil.rmtree(tmp, ignore_errors=True)
	print(f'series: making a git repository of the base in {repo} (once)', flush=True)
	# Hard links: git replaces files, it never writes into them.
	subprocess.run(['cp', '-al', str(pristine), str(tmp)], check=True)
	git(tmp, 'init', '-q')
	git(tmp, 'config', 'core.compression', '1')
	git(tmp, 'add', '-A', '-f', '.')
	env = dict(os.environ, GIT_AUTHOR_DATE='2000-01-01T00:00:00Z',
		   GIT_COMMITTER_DATE='2000-01-01T00:00:00Z')
	git(tmp, 'commit', '-q', '-m', f'Linux {version}', env=env)
	git(tmp, 'tag', BASE_TAG)
	tmp.rename(repo)
	return repo


def manifest(pristine: Path, patches: Optional[Sequence[Patch]] = None) -> Dict[str, str]:
	"""{tree path: sha256} of every base file the series replaces or patches."""
	out = {}
	for p in patches or patchset.load():
		for dst in patchset.diff_paths(p.diff_text()):
			if (pristine / dst).exists():
				out[dst] = hashlib.sha256((pristine / dst).read_bytes()).hexdigest()
	return dict(sorted(out.items()))


def manifest_text(pristine: Path, patches: Optional[Sequence[Patch]] = None) -> str:
	return ''.join(f'{h}  {p}\n' for p, h in manifest(pristine, patches).items())


def new_files(pristine: Path, patches: Optional[Sequence[Patch]] = None) -> List[str]:
	"""Tree paths the series creates."""
	return sorted({d for p in patches or patchset.load()
		       for d in patchset.diff_paths(p.diff_text()) if not (pristine / d).exists()})


# ---------------------------------------------------------------- export

def commit_series(repo: Path, pristine: Path, patches: Optional[Sequence[Patch]] = None,
		  mails: Optional[Sequence[Mail]] = None) -> str:
	"""(Re)make branch tb-series: one commit per patch, on tb-base (with
	mails: each patch's mail for this base, as backport.py made it)."""
	signoff = identity()
	if patches is None:
		patches = patchset.load()
	stack = list(zip(patches, mails)) if mails is not None else stackgit.stack_of(patches)
	return stackgit.commit_stack(repo, BRANCH, stack,
				     tail=lambda p: f'Signed-off-by: {signoff}')


def maintainers(repo: Path, files: Iterable[Path]) -> str:
	"""get_maintainer.pl output for the patch files, run in the series' tree."""
	r = subprocess.run(['perl'] + GET_MAINTAINER + [str(f) for f in files], cwd=repo,
			   capture_output=True, text=True)
	return r.stdout.strip()


def fill_cover(cover: Path, repo: Path, patch_files: Iterable[Path], version: str, debver: str,
	       patches: Sequence[Patch], package: str) -> None:
	subject, body = patchset.cover_message(patches)
	text = cover.read_text()
	text = text.replace('*** SUBJECT HERE ***', subject)
	extra = (f'\nBase: Linux {version} as packaged by Debian ({package}\n'
		 f'{debver}), committed as one commit: that is the base-commit below.\n'
		 f'The sha256 of every file the series replaces or patches is in\n'
		 f'{MANIFEST.name} next to these patches.\n\n'
		 f'{" ".join(GET_MAINTAINER)} on the series:\n\n'
		 + maintainers(repo, patch_files) + '\n')
	cover.write_text(text.replace('*** BLURB HERE ***', body + extra))


def export(workdir: Path, pristine: Path, outdir: Path, version: str, debver: str,
	   package: str, patches: Optional[Sequence[Patch]] = None,
	   mails: Optional[Sequence[Mail]] = None) -> List[Path]:
	"""Write the series (or the given patches of it) to outdir; return the
	list of files. The base is Debian's package; mails: the patches'
	mails for it, if not their own (another base's fixes)."""
	repo = base_repo(workdir, pristine, version)
	commit_series(repo, pristine, patches, mails)
	shutil.rmtree(outdir, ignore_errors=True)
	outdir.mkdir(parents=True)
	out = git(repo, 'format-patch', '-q', '--cover-letter', '--base', BASE_TAG, '-B',
		  '--no-signature', '-o', str(outdir), f'{BASE_TAG}..{BRANCH}')
	files = sorted(outdir.glob('*.patch'))
	cover = [f for f in files if f.name.startswith('0000-')]
	if not cover:
		raise Failed(f'git format-patch wrote no cover letter: {out}')
	fill_cover(cover[0], repo, [f for f in files if f not in cover], version, debver,
		   patchset.patches_for('ours') if patches is None else patches, package)
	(outdir / MANIFEST.name).write_text(manifest_text(pristine, patches))
	return files


# ---------------------------------------------------------------- apply

def drifted(tree: Union[str, Path], recorded: str) -> List[Tuple[str, str]]:
	"""[(path, why)] of base files in tree that differ from the recorded hashes."""
	bad = []
	for line in recorded.splitlines():
		want, path = line.split(None, 1)
		f = Path(tree) / path
		if not f.exists():
			bad.append((path, 'missing'))
		elif hashlib.sha256(f.read_bytes()).hexdigest() != want:
			bad.append((path, 'differs from the base the series was made against'))
	return bad


def apply(tree: Union[str, Path], outdir: Path, pristine: Path,
	  recorded: Optional[str] = None) -> int:
	"""git am the exported series onto the user's git tree, whose files
	must have the hashes recorded (MANIFEST's unless given)."""
	tree = Path(tree).resolve()
	if not (tree / 'Makefile').exists() or not (tree / 'kernel' / 'time').is_dir():
		raise Failed(f'{tree} is not a kernel source tree')
	if git(tree, 'rev-parse', '--is-inside-work-tree', check=False) != 'true':
		raise Failed(f'{tree} is not a git work tree: run "git init && git add -A && '
			     f'git commit -m base" there first, or apply the files in {outdir} '
			     f'with "patch -p1"')
	if git(tree, 'status', '--porcelain', '--untracked-files=no'):
		raise Failed(f'{tree} has uncommitted changes: commit or stash them first')
	bad = drifted(tree, MANIFEST.read_text() if recorded is None else recorded)
	bad += [(p, 'exists already; the series creates it')
		for p in new_files(pristine) if (tree / p).exists()]
	if bad:
		raise Failed('the base differs from the one the series was made and tested '
			     'against; refusing to apply:\n' +
			     '\n'.join(f'  {p}: {why}' for p, why in bad))
	patches = sorted(f for f in outdir.glob('*.patch') if not f.name.startswith('0000-'))
	r = subprocess.run(['git', '-C', str(tree), 'am', '--whitespace=error-all'] +
			   [str(p) for p in patches], capture_output=True, text=True)
	if r.returncode:
		subprocess.run(['git', '-C', str(tree), 'am', '--abort'], capture_output=True)
		raise Failed(f'git am failed (aborted, tree unchanged):\n{r.stdout}{r.stderr}')
	return len(patches)


# ---------------------------------------------------------------- verify

def base_worktree(repo: Path, workdir: Path, name: str) -> Path:
	"""workdir/name, a worktree of the base repository (made at tb-base)."""
	wt = workdir / name
	if not (wt / '.git').exists():
		shutil.rmtree(wt, ignore_errors=True)
		git(repo, 'worktree', 'prune')
		git(repo, 'worktree', 'add', '-q', '--detach', str(wt), BASE_TAG)
	return wt


def am_worktree(repo: Path, workdir: Path) -> Path:
	"""A worktree of the base repository, reset to tb-base."""
	wt = base_worktree(repo, workdir, 'series-am')
	git(wt, 'am', '--abort', check=False)
	git(wt, 'checkout', '-q', '-f', '--detach', BASE_TAG)
	# Untracked files left by an earlier run (build directories are
	# dot-directories, which the kernel's .gitignore keeps out of this).
	git(wt, 'clean', '-q', '-f', '-d')
	return wt


def row(name: str, ok: bool, detail: str = '') -> Row:
	return Row(name, Status.of(ok), detail)


def message_key(msg: str) -> str:
	"""A compiler message without its line and column, to compare across steps."""
	return re.sub(r'^(?:\.\./)?([^:\s]+):\d+(?::\d+)?:', r'\1:', msg.strip())


def step_build(wt: Path, config: Path, env: Dict[str, str], jobs: int, ours: Collection[str],
	       known: AbstractSet[str] = frozenset(), forget: bool = True,
	       configure: bool = True) -> Tuple[bool, float, List[str]]:
	"""Build STEP_TARGETS in wt with config; return (ok, seconds, messages).

	ours: the paths the series has set so far, whose warnings count;
	known: message_key()s of the base's own warnings in them (W=1's
	kernel-doc warnings of upstream's tick-broadcast.c), which do not;
	forget: recompile all of ours, not only what changed since the last
	build in wt (whose warnings that build showed); configure: make the
	configuration anew from config (needed when a Kconfig file changed).
	"""
	bdir = wt / '.build-steps'
	bdir.mkdir(exist_ok=True)
	t0 = time.time()
	base = ['make', '-s', f'-j{jobs}', 'O=.build-steps', 'CC=ccache gcc', 'HOSTCC=ccache gcc']
	r = subprocess.CompletedProcess([], 0, '', '')
	if configure or not (bdir / '.config').exists():
		shutil.copyfile(config, bdir / '.config')
		r = subprocess.run(base + ['olddefconfig'], cwd=wt, env=env, capture_output=True,
				   text=True)
	if forget:
		configbuilds.forget_objects(bdir, ours)
	if r.returncode:
		return False, time.time() - t0, (r.stdout + r.stderr).splitlines()[-10:]
	ok, msgs = make_w1(wt, '.build-steps', STEP_TARGETS, env, jobs, ours, known)
	return ok and not msgs, time.time() - t0, msgs


def make_w1(wt: Path, build_dir: str, targets: Sequence[str], env: Dict[str, str], jobs: int,
	    ours: Collection[str], known: AbstractSet[str] = frozenset(),
	    args: Sequence[str] = ()) -> Tuple[bool, List[str]]:
	"""make W=1 targets in wt, O=build_dir, with args (ARCH=...) as the
	configuration was made; (it succeeded, its errors and its warnings in
	ours but those whose message_key() is in known, or its last lines if
	it failed without any)."""
	r = subprocess.run(['make', '-s', f'-j{jobs}', f'O={build_dir}', *args, 'CC=ccache gcc',
			    'HOSTCC=ccache gcc', 'W=1'] + list(targets),
			   cwd=wt, env=env, capture_output=True, text=True)
	out = r.stdout + r.stderr
	msgs = [m for m in configbuilds.our_messages(out, ours) if message_key(m) not in known]
	if r.returncode and not msgs:
		msgs = out.splitlines()[-10:]
	return not r.returncode, msgs


def checkpatch_findings(text: str) -> List[Tuple[str, str, str]]:
	"""[(type, code line, message)] of checkpatch's (non-terse) output."""
	out = []
	for block in text.split('\n\n'):
		m = re.search(r'^(?:ERROR|WARNING|CHECK):(\w+): (.*)$', block, re.M)
		if not m:
			continue
		code = re.search(r'^\+.*$', block, re.M)
		out.append((m.group(1), code.group(0) if code else '', m.group(0)))
	return out


def checkpatch(wt: Path, patch: Path) -> Tuple[bool, List[str]]:
	"""checkpatch.pl --strict on one generated patch; (ok, findings)."""
	ignore = list(CHECKPATCH_IGNORE)
	text = patch.read_text()
	if re.search(TRACE_HEADER, text, re.M):
		ignore += CHECKPATCH_IGNORE_TRACE
	r = subprocess.run(['perl', 'scripts/checkpatch.pl', '--strict', '--show-types',
			    '--ignore', ','.join(ignore), str(patch)], cwd=wt,
			   capture_output=True, text=True)
	bad = [f'{msg}: {code.strip()}' for kind, code, msg in checkpatch_findings(r.stdout)
	       if not re.search(CHECKPATCH_ALLOWED.get(kind, r'(?!)'), code)]
	ok = not bad and bool(not r.returncode or checkpatch_findings(r.stdout))
	return ok, bad or r.stdout.splitlines()[-1:]


def maintainer_rows(wt: Path, files: Iterable[str]) -> List[Row]:
	rows = []
	for f in files:
		r = subprocess.run(['perl'] + GET_MAINTAINER + ['-f', f], cwd=wt,
				   capture_output=True, text=True)
		lines = r.stdout.splitlines()
		m = [ln for ln in lines if '(maintainer:' in ln]
		lists = [ln for ln in lines if 'list' in ln and '@' in ln and '(maintainer:' not in ln]
		rows.append(row(f'series/maintainers/{f}', bool(m and lists),
				'; '.join(lines) or r.stderr.strip()))
	return rows


def uml_kunit(wt: Path, env: Dict[str, str], jobs: int) -> Row:
	"""The in-tree KUnit command a kernel developer runs, on UML, in wt.

	kunit.py's default architecture has no tick broadcast: the core suite
	must run and pass there, the others build and skip.
	"""
	logfile = wt / '.build-um' / 'kunit-run.log'
	rc, secs = run_logged(kunit_py('run', *UML_ARGS, '--build_dir=.build-um', '--jobs', str(jobs)),
			      logfile, 'series: the in-tree KUnit command on UML', cwd=wt, env=env)
	out = logfile.read_text(errors='replace')
	done = re.search(r'Testing complete\. (Ran \d+ tests: .*)', out)
	ok = not rc and '[PASSED] tick_broadcast_core' in out and done
	return row('series/kunit-in-tree-uml', bool(ok),
		   f'kunit.py run --kunitconfig=kernel/time/tests (UML) in {secs:.0f} s: '
		   f'{done.group(1) if done else "no result"}; log {logfile}')


def verify(workdir: Path, pristine: Path, outdir: Path, tested_tree: Path, config: Path,
	   env: Dict[str, str], jobs: int, steps: bool = True, part: str = 'all') -> List[Row]:
	"""Test rows: the exported series applies, matches, builds, passes checkpatch.

	part fixes: the standalone fixes, which must match the exported branch;
	the tested tree is the whole series', so it is not compared."""
	rows = []
	repo = base_repo(workdir, pristine, '')
	rows.append(row('series/base-manifest', MANIFEST.exists() and
			MANIFEST.read_text() == manifest_text(pristine),
			f'{MANIFEST.name} does not match the base: '
			f'regenerate it with "tb.py series --manifest"'))
	wt = am_worktree(repo, workdir)
	patches = sorted(f for f in outdir.glob('*.patch') if not f.name.startswith('0000-'))
	r = subprocess.run(['git', '-C', str(wt), 'am', '--whitespace=error-all'] +
			   [str(p) for p in patches], capture_output=True, text=True)
	rows.append(row('series/git-am', not r.returncode,
			f'{len(patches)} patches applied' if not r.returncode
			else (r.stdout + r.stderr)[-1500:]))
	if r.returncode:
		git(wt, 'am', '--abort', check=False)
		return rows
	same = git(wt, 'rev-parse', 'HEAD^{tree}') == git(repo, 'rev-parse', f'{BRANCH}^{{tree}}')
	if part != 'all':
		rows.append(row('series/identical-to-branch', same,
				'the applied patches and the exported branch differ'))
		return rows + series_rows(wt, patches, pristine, config, env, jobs, steps, False)
	want = patchset.tree_files('ours', pristine)
	diff = [p for p, data in want.items()
		if (data is None) != (not (tested_tree / p).exists()) or
		(data is not None and (tested_tree / p).read_bytes() != (wt / p).read_bytes())]
	rows.append(row('series/identical-to-tested-tree', same and not diff,
			'differs: ' + ', '.join(diff[:10]) if diff else
			'the applied series and the exported branch differ'))
	return rows + series_rows(wt, patches, pristine, config, env, jobs, steps, True)


def series_rows(wt: Path, patches: Sequence[Path], pristine: Path, config: Path,
		env: Dict[str, str], jobs: int, steps: bool, whole: bool) -> List[Row]:
	"""checkpatch and (steps) every step's build of the patches applied in
	worktree wt; for the whole series also MAINTAINERS and the UML suite
	(the fixes alone add neither files nor tests)."""
	rows = []
	commits = git(wt, 'rev-list', '--reverse', f'{BASE_TAG}..HEAD').split()
	for patch in patches:
		ok, bad = checkpatch(wt, patch)
		rows.append(row(f'series/checkpatch/{patch.name}', ok, '\n'.join(bad[:10])))
	if whole:
		rows += maintainer_rows(wt, new_files(pristine))
	if steps:
		# What the base itself warns about in the files the series touches.
		git(wt, 'checkout', '-q', '--detach', BASE_TAG)
		touched = {p for p in patchset.tree_files('ours', pristine) if (wt / p).exists()}
		ok, secs, msgs = step_build(wt, config, env, jobs, touched)
		rows.append(row('series/build/base', ok or all('warning:' in m for m in msgs),
				f'{secs:.0f} s\n' + '\n'.join(msgs[:10])))
		known = frozenset(message_key(m) for m in msgs)
		for n, (commit, patch) in enumerate(zip(commits, patches), 1):
			git(wt, 'checkout', '-q', '--detach', commit)
			ours = set(patchset.tree_files('ours', pristine, upto=n))
			# After the base's build every step rebuilds what it changed
			# (git checkout touches only those files) and what depends on it.
			kconfig = any('Kconfig' in path
				      for path in patchset.diff_paths(patch.read_text()))
			ok, secs, msgs = step_build(wt, config, env, jobs, ours, known, forget=False,
						    configure=n == 1 or kconfig)
			rows.append(row(f'series/build/{patch.name}', ok,
					f'{secs:.0f} s' + ('\n' + '\n'.join(msgs[:10]) if msgs else '')))
			print(f'series: {patch.name}: built {" ".join(STEP_TARGETS)} in {secs:.0f} s'
			      f'{"" if ok else " FAILED"}', flush=True)
		if whole:
			rows.append(uml_kunit(wt, env, jobs))
			print(f'series: {rows[-1].detail}', flush=True)
	return rows


def check_rows(ws: ModuleType, steps: bool = True) -> List[Row]:
	"""make check's rows for the series: export, then verify."""
	pristine = ws.unpack_pristine()
	outdir = ws.CACHE / 'series'
	t0 = time.time()
	try:
		files = export(ws.workdir(), pristine, outdir, ws.kernel_version(pristine),
			       ws.base_version(), ws.BASES[ws.DEFAULT_BASE].package)
	except (Failed, patchset.SeriesError) as e:
		return [row('series/export', False, str(e))]
	rows = [row('series/export', True, f'{len(files) - 1} patches in {outdir}')]
	tree = ws.tree_dir('ours')
	try:
		rows += verify(ws.workdir(), pristine, outdir, tree,
			       tree / ws.build_dir_name() / '.config', ws.build_env(), ws.JOBS, steps)
	except Failed as e:
		rows.append(row('series/verify', False, str(e)))
	print(f'series: checked in {time.time() - t0:.0f} s', flush=True)
	return rows


# ---------------------------------------------------------------- another base

# The fixes' build on another base: x86_64's defconfig, which has the
# broadcast code (checked after olddefconfig), and W=1 on the directory
# the fixes change, without -Werror (WERROR, y in 6.1's defconfig,
# turns the base's own W=1 warnings in hrtimer.c into errors).
FIXES_BUILD_DIR = '.build-fixes-x86_64'
FIXES_SYMBOLS = {'SMP': 'y', 'GENERIC_CLOCKEVENTS_BROADCAST': 'y', 'TICK_ONESHOT': 'y',
		 'NO_HZ_IDLE': 'y', 'HIGH_RES_TIMERS': 'y', 'WERROR': 'n'}
FIXES_TARGETS = ['kernel/time/']


def fixes_tree(workdir: Path, pristine: Path) -> Path:
	"""workdir/fixes: the pristine tree, hard-linked (made once), for
	set_files() to put the fixes' files into."""
	tree = workdir / 'fixes'
	if not (tree / 'Makefile').exists():
		tmp = workdir / 'fixes.tmp'
		shutil.rmtree(tmp, ignore_errors=True)
		subprocess.run(['cp', '-al', str(pristine), str(tmp)], check=True)
		tmp.rename(tree)
	return tree


def set_files(tree: Path, files: Dict[str, Optional[bytes]]) -> None:
	"""Give tree's files these contents (None: absent). A file that
	changes is unlinked first, so that its pristine twin it may be
	hard-linked to stays as it is, and written anew (newer than its
	objects); one that already has them is left alone."""
	for path, data in files.items():
		f = tree / path
		if data is not None and f.exists() and f.read_bytes() == data:
			continue
		f.unlink(missing_ok=True)
		if data is not None:
			f.parent.mkdir(parents=True, exist_ok=True)
			f.write_bytes(data)


def configure_fixes_build(tree: Path, env: Dict[str, str], jobs: int) -> str:
	"""x86_64 defconfig in tree/FIXES_BUILD_DIR (once); '' or what is wrong."""
	make = ['make', '-s', f'-j{jobs}', f'O={FIXES_BUILD_DIR}', 'ARCH=x86_64',
		'CC=ccache gcc', 'HOSTCC=ccache gcc']
	config = tree / FIXES_BUILD_DIR / '.config'
	if not config.exists():
		r = subprocess.run(make + ['defconfig'], cwd=tree, env=env, capture_output=True,
				   text=True)
		if not r.returncode:
			configbuilds.set_symbols(tree, config, {'WERROR': 'n'})
			r = subprocess.run(make + ['olddefconfig'], cwd=tree, env=env,
					   capture_output=True, text=True)
		if r.returncode:
			config.unlink(missing_ok=True)
			return f'make defconfig failed:\n{r.stderr[-1500:]}'
	text = config.read_text()
	off = {k: configbuilds.config_value(text, k) for k, v in FIXES_SYMBOLS.items()
	       if configbuilds.config_value(text, k) != v}
	return f'x86_64 defconfig has {off}, wanted {FIXES_SYMBOLS}' if off else ''


def build_w1(tree: Path, env: Dict[str, str], jobs: int,
	     touched: Collection[str]) -> Tuple[bool, float, List[str]]:
	"""make W=1 FIXES_TARGETS in tree; (ok, seconds, the errors and the
	warnings in the touched files, their objects recompiled)."""
	configbuilds.forget_objects(tree / FIXES_BUILD_DIR, touched)
	t0 = time.time()
	ok, msgs = make_w1(tree, FIXES_BUILD_DIR, FIXES_TARGETS, env, jobs, touched,
			   args=['ARCH=x86_64'])
	return ok, time.time() - t0, msgs


def fixes_build_row(name: str, tree: Path, pristine: Path, ported: Sequence[backport.Ported],
		    env: Dict[str, str], jobs: int) -> Row:
	"""The row NAME: FIXES_TARGETS of tree built W=1 as the pristine base,
	then with every ported fix; it fails on an error or on a warning in
	the fixes' files that the base does not have."""
	state: patchset.FileState = {}
	try:
		for f in ported:
			patchset.apply_diff(f.mail.diff, state, pristine, f.patch.slug)
	except patchset.SeriesError as e:
		return row(name, False, f'the fixes do not apply in order: {e}')
	touched = sorted(state)
	why = configure_fixes_build(tree, env, jobs)
	if why:
		return row(name, False, why)
	set_files(tree, {p: (pristine / p).read_bytes() if (pristine / p).exists() else None
			 for p in touched})
	ok, base_secs, msgs = build_w1(tree, env, jobs, touched)
	if not ok:
		return row(name, False, 'the pristine base does not build:\n' + '\n'.join(msgs))
	known = {message_key(m) for m in msgs}
	set_files(tree, state)
	ok, secs, msgs = build_w1(tree, env, jobs, touched)
	new = [m for m in msgs if message_key(m) not in known]
	return row(name, ok and not new,
		   f'{" ".join(FIXES_TARGETS)} W=1, x86_64 defconfig, with {len(ported)} fixes: '
		   f'{len(new)} new errors or warnings in {", ".join(touched)} '
		   f'({len(known)} of the base\'s own); {base_secs:.0f} s pristine, '
		   f'{secs:.0f} s with the fixes' + ('\n' + '\n'.join(new[:15]) if new else ''))


def other_base_rows(ws: ModuleType, base: str) -> List[Row]:
	"""make check's rows for the fixes on another base: they can be made
	for it (series/BASE/fixes, saying which were regenerated), and its
	kernel/time/ builds with all of them (series/BASE/build)."""
	t0 = time.time()
	try:
		ported = backport.port_fixes(ws.unpack_pristine(), ws.unpack_pristine(base),
					     names=(ws.DEFAULT_BASE, base))
	except patchset.SeriesError as e:
		return [row(f'series/{base}/fixes', False, str(e)),
			Row(f'series/{base}/build', Status.SKIP, 'not every fix could be made for '
			    f'{base}: see series/{base}/fixes')]
	how = backport.describe(ported)
	rows = [row(f'series/{base}/fixes', True, '; '.join(
		f'{what}: {", ".join(slugs)}' for what, slugs in how.items() if slugs))]
	pristine = ws.unpack_pristine(base)
	tree = fixes_tree(ws.workdir(base), pristine)
	rows.append(fixes_build_row(f'series/{base}/build', tree, pristine, ported,
				    ws.build_env(), ws.JOBS))
	print(f'series: the fixes on {base} (Linux {ws.kernel_version(pristine)}) checked in '
	      f'{time.time() - t0:.0f} s', flush=True)
	return rows


# ---------------------------------------------------------------- command

PARTS = ('all', 'fixes')


def part_patches(part: str) -> List[Patch]:
	"""The patches of ours that make up part: all, or the standalone fixes."""
	patches = patchset.patches_for('ours')
	return [p for p in patches if p.fix] if part == 'fixes' else patches


def outdir_of(ws: ModuleType, part: str, base: str = '') -> Path:
	name = 'series' if part == 'all' else f'series-{part}'
	return ws.CACHE / (f'{name}-{base}' if base and base != ws.DEFAULT_BASE else name)


def ported_fixes(ws: ModuleType, base: str) -> List[backport.Ported]:
	"""The fixes made for another base than the series' (workspace.BASES),
	each said to have applied or been merged."""
	ported = backport.port_fixes(ws.unpack_pristine(), ws.unpack_pristine(base),
				     names=(ws.DEFAULT_BASE, base))
	for f in ported:
		print(f'series: {base}: {f.describe()}', flush=True)
	return ported


def export_other_base(ws: ModuleType, base: str, outdir: Path) -> List[Path]:
	"""The fixes for base (not the series' own), exported to outdir."""
	ported = ported_fixes(ws, base)
	pristine = ws.unpack_pristine(base)
	return export(ws.workdir(base), pristine, outdir, ws.kernel_version(pristine),
		      ws.base_version(base), ws.BASES[base].package, [f.patch for f in ported],
		      [f.mail for f in ported])


def cmd_series(args: argparse.Namespace, ws: ModuleType) -> None:
	"""tb.py series: export (git format-patch), verify, apply."""
	base = args.kernel
	if base != ws.DEFAULT_BASE:
		other_base(args, ws)
		return
	pristine = ws.unpack_pristine()
	version = ws.kernel_version(pristine)
	outdir = outdir_of(ws, args.part)
	try:
		if args.manifest:
			MANIFEST.write_text(manifest_text(pristine))
			print(f'series: wrote {MANIFEST}')
		files = export(ws.workdir(), pristine, outdir, version, ws.base_version(),
			       ws.BASES[ws.DEFAULT_BASE].package, part_patches(args.part))
		print(f'series: {len(files) - 1} patches and a cover letter in {outdir}/:')
		for f in files:
			print(f'  {f.name}')
		if args.verify:
			tree = ws.prepare_tree('ours')
			config = tree / ws.build_dir_name() / '.config'
			rows = verify(ws.workdir(), pristine, outdir, tree, config, ws.build_env(),
				      ws.JOBS, part=args.part)
			results.print_rows(rows)
			if results.failed(rows):
				sys.exit(1)
		if args.base:
			n = apply(args.base, outdir, pristine)
			print(f'series: applied {n} patches to {args.base} (git log -{n} there)')
	except (Failed, patchset.SeriesError) as e:
		print(f'series: error: {e}', file=sys.stderr)
		sys.exit(1)


def other_base(args: argparse.Namespace, ws: ModuleType) -> None:
	"""tb.py series --part fixes --kernel BASE: the fixes for another base
	than the series' (6.1), and git am of them onto a tree of it."""
	base = args.kernel
	ws.base_of(base)
	if args.part != 'fixes' or args.verify or args.manifest:
		sys.exit(f'series: only the fixes go to {base} (--part fixes; no --verify, '
			 '--manifest): the rest of the series is for '
			 f'{ws.DEFAULT_BASE}')
	outdir = outdir_of(ws, args.part, base)
	try:
		files = export_other_base(ws, base, outdir)
		print(f'series: {len(files) - 1} fixes for {base} and a cover letter in {outdir}/:')
		for f in files:
			print(f'  {f.name}')
		if args.base:
			n = apply(args.base, outdir, ws.unpack_pristine(base),
				  (outdir / MANIFEST.name).read_text())
			print(f'series: applied {n} patches to {args.base} (git log -{n} there)')
	except (Failed, patchset.SeriesError) as e:
		print(f'series: error: {e}', file=sys.stderr)
		sys.exit(1)
