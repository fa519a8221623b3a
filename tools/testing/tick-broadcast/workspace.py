# SPDX-License-Identifier: GPL-2.0
"""The workspace: Debian packages, source trees, builds and KUnit runs.

Everything that is not the repository lives in $TB_CACHE (default
~/.cache/tick-broadcast):

  linux-<debian version>/pristine    a base (BASES: linux-source-6.12,
                                     the default, or linux-source-6.1)
                                     unpacked once
  linux-<debian version>/{ours,base} the two trees, updated in place by
                                     patchset.tree_files(); each has its
                                     build directory .build-x86_64[-variant]
  ccache/, initramfs-x86_64.cpio
  runs/                              logs and results of every step:
                                     build-TREE[-VARIANT].log,
                                     kunit-TREE[-VARIANT]/, scenarios/, ...

Kernel configs (kunit.py --kunitconfig fragments, merged in order):
ours  kernel/time/tests/.kunitconfig (every suite of the series) +
      configs/x86_64.config (+ configs/x86_64-ours.config if present)
base  configs/base.kunitconfig (the base has only the live and bench
      suites) + configs/x86_64.config
and configs/VARIANT.config on top for a variant (e.g. debug; acpi and
psci: the kernel's own cpuidle drivers instead of the test driver), as
kunit.py --kconfig_add lines that override the fragments before it.

Builds run `kunit.py config` (olddefconfig and kunit.py's check that the
fragments took) and then make, with make's output streamed to
runs/build-TREE.log, so that the heartbeat can count the objects
compiled; kunit.py build would drop that output.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import absorb
import arches
import patchset
from kunitcmd import boot_args, kunit_py
from progress import Failed, count_lines, die, log, run, run_logged, tail
from patchset import FileState
from results import Row, Status, expect_failure

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parents[2]
CONFIGS = TOOLS / 'configs'
CACHE = Path(os.environ.get('TB_CACHE', Path.home() / '.cache' / 'tick-broadcast'))
RUNS = CACHE / 'runs'


@dataclass(frozen=True)
class Base:
	"""A kernel the series applies to, as Debian packages its source.

	The series is made against 6.12 (DEFAULT_BASE): the trees ours and
	base, every build and boot. Its fixes also go to 6.1 (BASE=6.1)."""
	name: str	# what BASE= says: 6.12, 6.1
	package: str
	tarball: Path


def debian_base(name: str) -> Base:
	"""Debian's linux-source-NAME, its tarball in /usr/src."""
	return Base(name, f'linux-source-{name}', Path(f'/usr/src/linux-source-{name}.tar.xz'))


BASES = {b.name: b for b in (debian_base('6.12'), debian_base('6.1'))}
DEFAULT_BASE = '6.12'
TREES = ('ours', 'base')
JOBS = os.cpu_count() or 2
ARCH = arches.DEFAULT	# the default architecture of builds and boots
ARCHES = tuple(arches.ARCHES)

# command or file -> Debian package providing it
DEPENDS = {
	# every base: the second one for make unit and make check's build of
	# the fixes on it, and make series BASE=
	**{str(b.tarball): b.package for b in BASES.values()},
	'flex': 'flex',
	'bison': 'bison',
	'bc': 'bc',
	'/usr/include/libelf.h': 'libelf-dev',
	'/usr/include/openssl/ssl.h': 'libssl-dev',
	'cpio': 'cpio',
	'perl': 'perl',
	'make': 'make',
	'gcc': 'gcc',
	'ccache': 'ccache',
	'xz': 'xz-utils',
	'qemu-system-x86_64': 'qemu-system-x86',
	'/usr/share/qemu/qboot.rom': 'qemu-system-data',
	'/bin/busybox': 'busybox-static',
	'/usr/lib/x86_64-linux-gnu/libc.a': 'libc6-dev',
	'sparse': 'sparse',
	'rsync': 'rsync',
	'patch': 'patch',
	'git': 'git',
	# the series as quilt reads it, and the type checker (make unit)
	'quilt': 'quilt',
	'mypy': 'mypy',
	# make series / make check: htmldocs, the arm64 configuration build
	'/usr/bin/sphinx-build': 'python3-sphinx',
	'dot': 'graphviz',
	'aarch64-linux-gnu-gcc': 'gcc-aarch64-linux-gnu',
	'/usr/aarch64-linux-gnu/lib/libc.a': 'libc6-dev-arm64-cross',
	# the arm64 guest (its busybox: foreign_busybox())
	'qemu-system-aarch64': 'qemu-system-arm',
	'dtc': 'device-tree-compiler',
	# the SSDT that gives acpi_idle its C-states (firmware.py)
	'iasl': 'acpica-tools',
}


# What make unit needs: the bases' files (the fixes are checked on each),
# git and quilt for the series, the type checker.
UNIT_DEPENDS = {k: DEPENDS[k] for k in [str(b.tarball) for b in BASES.values()] +
		['git', 'quilt', 'mypy', 'xz']}

# ---------------------------------------------------------------- deps

def missing_packages(depends: Optional[Dict[str, str]] = None) -> List[str]:
	miss: List[str] = []
	for what, pkg in (depends or DEPENDS).items():
		found = Path(what).exists() if what.startswith('/') else shutil.which(what)
		if not found and pkg not in miss:
			miss.append(pkg)
	return miss


def install_deps(depends: Optional[Dict[str, str]] = None) -> None:
	"""Install the missing Debian packages (as root), or die saying which."""
	miss = missing_packages(depends)
	if not miss:
		return
	log(f'installing missing Debian packages: {" ".join(miss)}')
	if os.geteuid() != 0:
		die(f'not root: run "sudo apt-get install {" ".join(miss)}" first')
	env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
	for cmd in (['apt-get', 'update', '-q'],
		    ['apt-get', 'install', '-y', '-q', '--no-install-recommends'] + miss):
		log(f'running {" ".join(cmd)}')
		r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL)
		if r.returncode:
			die(f'"{" ".join(cmd)}" failed; install {" ".join(miss)} by hand')
	still = missing_packages(depends)
	if still:
		die(f'still missing after apt-get: {" ".join(still)}')


def foreign_busybox(arch: str) -> Path:
	"""Debian's static busybox for arch (arm64), unpacked into $TB_CACHE.

	busybox-static of another architecture cannot be installed next to
	the host's (same path), so its package is downloaded (dpkg learns the
	architecture once: dpkg --add-architecture) and unpacked, not installed.
	"""
	out = CACHE / f'busybox-{arch}' / 'bin' / 'busybox'
	if out.exists():
		return out
	log(f'fetching Debian\'s busybox-static:{arch} for the {arch} guest')
	foreign = subprocess.run(['dpkg', '--print-foreign-architectures'],
				 capture_output=True, text=True).stdout.split()
	if arch not in foreign:
		if os.geteuid() != 0:
			die(f'not root: run "sudo dpkg --add-architecture {arch} && sudo apt-get update"')
		run(['dpkg', '--add-architecture', arch])
		run(['apt-get', 'update', '-q'], stdout=subprocess.DEVNULL)
	stage = out.parents[1]
	shutil.rmtree(stage, ignore_errors=True)
	stage.mkdir(parents=True)
	run(['apt-get', 'download', '-q', f'busybox-static:{arch}'], cwd=stage,
	    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
	debs = list(stage.glob('busybox-static_*.deb'))
	if len(debs) != 1:
		die(f'apt-get download busybox-static:{arch} gave {debs}')
	run(['dpkg-deb', '-x', str(debs[0]), str(stage)])
	if not out.exists():
		die(f'{debs[0]} has no bin/busybox')
	return out


# ---------------------------------------------------------------- trees

def base_of(name: str) -> Base:
	"""The base called name (BASES), or die naming the known ones."""
	if name not in BASES:
		die(f'unknown base "{name}" (want one of {", ".join(BASES)})')
	return BASES[name]


def base_version(base: str = DEFAULT_BASE) -> str:
	"""The Debian version of the base's package, as a file name."""
	package = base_of(base).package
	r = subprocess.run(['dpkg-query', '-W', '-f=${Version}', package],
			   capture_output=True, text=True)
	if r.returncode or not r.stdout:
		die(f'{package} is not installed (tb.py deps)')
	return re.sub(r'[^A-Za-z0-9.+-]', '_', r.stdout.strip())


def workdir(base: str = DEFAULT_BASE) -> Path:
	return CACHE / f'linux-{base_version(base)}'


def pristine_dir(base: str = DEFAULT_BASE) -> Path:
	return workdir(base) / 'pristine'


def tree_dir(tree: str) -> Path:
	if tree not in TREES:
		die(f'unknown tree "{tree}" (want one of {", ".join(TREES)})')
	return workdir() / tree


def kernel_version(src: Path) -> str:
	mk = (src / 'Makefile').read_text()
	v = {}
	for k in ('VERSION', 'PATCHLEVEL', 'SUBLEVEL'):
		m = re.search(rf'^{k} = (\S*)', mk, re.M)
		if not m:
			die(f'{src}/Makefile sets no {k}')
		v[k] = m.group(1)
	return f'{v["VERSION"]}.{v["PATCHLEVEL"]}.{v["SUBLEVEL"]}'


def unpack_pristine(base: str = DEFAULT_BASE) -> Path:
	"""The base's pristine tree, its tarball unpacked the first time."""
	tarball = base_of(base).tarball
	dst = pristine_dir(base)
	if (dst / 'Makefile').exists():
		return dst
	dst.parent.mkdir(parents=True, exist_ok=True)
	tmp = Path(tempfile.mkdtemp(dir=dst.parent, prefix='unpack-'))
	log(f'unpacking {tarball} into {dst} (seconds to a minute)')
	run(['tar', '-xJf', str(tarball), '-C', str(tmp)])
	top = [p for p in tmp.iterdir() if p.is_dir()]
	if len(top) != 1:
		die(f'unexpected layout of {tarball}')
	top[0].rename(dst)
	tmp.rmdir()
	return dst


def desired_files(tree: str, pristine: Path) -> FileState:
	"""{tree path: bytes or None} for every file the series sets in tree."""
	try:
		return patchset.tree_files(tree, pristine)
	except patchset.SeriesError as e:
		die(str(e))


def check_kernel_paths(pristine: Path, ours: Optional[FileState] = None) -> None:
	"""Die, saying what to do, when the repository's files at kernel paths
	differ from the series (ours: what the series makes of our tree, if
	known): the builds take the series, so an edit there would be lost."""
	bad = patchset.mismatches(pristine, state=ours)
	if bad:
		die('the files at kernel paths differ from the series, which is what '
		    'the builds take:\n' + absorb.explain(pristine) +
		    '\n"make absorb" folds these edits into their patches; '
		    '"git checkout -- FILE" drops them')


def copy_dir(src: Path, dst: Path, ready: Optional[Callable[[Path], None]] = None) -> None:
	"""Make dst a copy of src (cp -a), whole under another name first and
	then renamed, so that an interrupted copy leaves no dst behind;
	ready(copy), if given, finishes the copy before the rename."""
	tmp = dst.with_name(dst.name + '.tmp')
	shutil.rmtree(tmp, ignore_errors=True)
	run(['cp', '-a', str(src), str(tmp)])
	if ready:
		ready(tmp)
	tmp.rename(dst)


def prepare_tree(tree: str) -> Path:
	"""Make tree (ours or base) match the series; return its directory."""
	pristine = unpack_pristine()
	dst = tree_dir(tree)
	if not (dst / 'Makefile').exists():
		log(f'creating tree {tree} at {dst} (copying the pristine tree)')
		copy_dir(pristine, dst)
	want = desired_files(tree, pristine)
	check_kernel_paths(pristine, want if tree == 'ours' else None)
	stamp = dst / '.tb-series-files'
	before = set(stamp.read_text().split()) if stamp.exists() else set()
	for path in sorted(before - set(want)):
		# dropped from the series: back to pristine
		if (pristine / path).exists():
			shutil.copyfile(pristine / path, dst / path)
		elif (dst / path).exists():
			(dst / path).unlink()
	changed = 0
	for path, data in sorted(want.items()):
		f = dst / path
		if data is None:
			if f.exists():
				f.unlink()
				changed += 1
			continue
		if f.exists() and f.read_bytes() == data:
			continue
		f.parent.mkdir(parents=True, exist_ok=True)
		f.write_bytes(data)
		changed += 1
	stamp.write_text('\n'.join(sorted(want)) + '\n')
	log(f'tree {tree}: Linux {kernel_version(dst)} (Debian {BASES[DEFAULT_BASE].package} '
	    f'{base_version()}), {len(want)} series files, {changed} updated, at {dst}')
	return dst


def prepare_all() -> List[Path]:
	return [prepare_tree(t) for t in TREES]


# ---------------------------------------------------------------- build

def build_env() -> Dict[str, str]:
	env = dict(os.environ)
	env.setdefault('CCACHE_DIR', str(CACHE / 'ccache'))
	env.setdefault('CCACHE_BASEDIR', str(CACHE))
	env.setdefault('CCACHE_MAXSIZE', '8G')
	env.setdefault('CCACHE_NOHASHDIR', '1')
	# identical builds for base and ours where the sources are identical
	env.setdefault('KBUILD_BUILD_TIMESTAMP', 'tick-broadcast testbed')
	env.setdefault('KBUILD_BUILD_USER', 'tb')
	env.setdefault('KBUILD_BUILD_HOST', 'tb')
	return env


def build_dir_name(variant: str = '', arch: str = ARCH) -> str:
	return f'.build-{arch}' + (f'-{variant}' if variant else '')


def kernel_image(tree: str, variant: str = '', arch: str = ARCH) -> Path:
	return tree_dir(tree) / build_dir_name(variant, arch) / arches.ARCHES[arch].image


def label(tree: str, variant: str = '', arch: str = ARCH) -> str:
	"""tree[-arch][-variant]: names the build's log and KUnit directory."""
	return '-'.join([tree] + ([arch] if arch != ARCH else []) + ([variant] if variant else []))


def cc(arch: str = ARCH) -> str:
	return f'ccache {arches.ARCHES[arch].cross}gcc'


def kunitconfigs(tree: str, variant: str = '', arch: str = ARCH) -> List[str]:
	"""The kunit.py --kunitconfig fragments of tree, in merge order."""
	if tree == 'base':
		frags = [str(CONFIGS / 'base.kunitconfig')]
	else:
		frags = ['kernel/time/tests/.kunitconfig']
	frags.append(str(CONFIGS / f'{arch}.config'))
	extra = CONFIGS / f'{arch}-{tree}.config'
	if extra.exists():
		frags.append(str(extra))
	if variant:
		frags.append(str(CONFIGS / f'{variant}.config'))
	return frags


def config_lines(fragment: Union[str, Path]) -> List[str]:
	"""The CONFIG_ lines of a config fragment, "is not set" ones included."""
	return [ln.strip() for ln in Path(fragment).read_text().splitlines()
		if re.match(r'(# )?CONFIG_\w+( is not set|=)', ln.strip())]


def kunit_args(tree: str, variant: str = '', arch: str = ARCH) -> Tuple[Path, List[str]]:
	"""(source dir, kunit.py arguments common to config, build and run).

	A variant's fragment goes last as --kconfig_add lines, which override
	the earlier fragments (the acpi variant turns the test
	driver off); kunit.py refuses two --kunitconfig fragments that set
	one symbol differently. Its check that the resulting .config has
	every entry accepts an "is not set" one that is absent or unset.
	"""
	args = ['--arch', arch, '--build_dir', build_dir_name(variant, arch)]
	if arches.ARCHES[arch].cross:
		args += ['--cross_compile', arches.ARCHES[arch].cross]
	frags = kunitconfigs(tree, variant, arch)
	for f in frags[:-1] if variant else frags:
		args += ['--kunitconfig', f]
	for line in config_lines(frags[-1]) if variant else ():
		args += ['--kconfig_add', line]
	args += ['--make_options', f'CC={cc(arch)}']
	return tree_dir(tree), args


def objects_compiled(logfile: Path) -> str:
	"""Progress of a make run (run_logged): the objects compiled so far."""
	n = count_lines(logfile, '  CC ')
	return f'{n} objects compiled' if n else 'configuring'


def config_path(tree: str, variant: str = '', arch: str = ARCH) -> Path:
	"""The .config of tree's QEMU kernel (configure(), build())."""
	return tree_dir(tree) / build_dir_name(variant, arch) / '.config'


def configure(tree: str, variant: str = '', prepare: bool = True, arch: str = ARCH) -> Path:
	"""Configure tree's QEMU kernel (kunit.py config: the fragments,
	olddefconfig and kunit.py's check that they took); return its .config.
	Raises Failed. prepare=False: the tree as it is on disk."""
	src = prepare_tree(tree) if prepare else tree_dir(tree)
	_, args = kunit_args(tree, variant, arch)
	name = label(tree, variant, arch)
	seed_build_dir(tree, variant, arch)
	logfile = RUNS / f'build-{name}.config.log'
	rc, _ = run_logged(kunit_py('config', *args), logfile, f'build {name}: kunit.py config',
			   cwd=src, env=build_env())
	if rc:
		raise Failed(f'build {name}: kunit.py config failed:\n{tail(logfile, 3000)}')
	return config_path(tree, variant, arch)


def make_errors(logfile: Path, n: int = 15) -> List[str]:
	"""The last n error lines of make's log."""
	return [ln for ln in tail(logfile, 200000).splitlines()
		if re.search(r'error:|Error \d', ln)][-n:]


def build(tree: str, variant: str = '', prepare: bool = True, arch: str = ARCH) -> Path:
	"""Build tree's QEMU kernel; return the bzImage. Raises Failed.

	prepare=False builds the tree as it is on disk (e.g. after editing a
	file of the workspace tree by hand), without restoring the series.
	"""
	configure(tree, variant, prepare, arch)
	src = tree_dir(tree)
	name = label(tree, variant, arch)
	logfile = RUNS / f'build-{name}.log'
	what = f'build {name}'
	make = ['make', f'ARCH={arch}', f'O={build_dir_name(variant, arch)}', f'--jobs={JOBS}',
		f'CC={cc(arch)}', 'all', 'compile_commands.json']
	if arches.ARCHES[arch].cross:
		make.insert(2, f'CROSS_COMPILE={arches.ARCHES[arch].cross}')
	rc, _ = run_logged(make, logfile, f'{what}: make', cwd=src, env=build_env(),
			   progress=objects_compiled)
	image = kernel_image(tree, variant, arch)
	if rc or not image.exists():
		raise Failed(f'{what} failed, log {logfile}:\n' + '\n'.join(make_errors(logfile)))
	check_image_tree(tree, variant, arch)
	log(f'{what}: kernel {image}')
	return image


# A function of our decision core: in our kernels, never in the base's.
OURS_ONLY_SYMBOL = 'tick_bc_init'


def seed_build_dir(tree: str, variant: str = '', arch: str = ARCH) -> None:
	"""Start a missing build directory as a copy of a sibling's.

	Kbuild then recompiles only what differs: objects whose command line
	or config symbols changed (include/config/), and those whose sources
	are newer than they are. Across trees, every file the series sets in
	either tree is touched first: the pristine files are older than the
	sibling's objects, so an object of ours would otherwise stand for the
	base's. With ccache alone, a sibling's build still takes minutes
	(1200 objects through ccache and objtool); seeded, it recompiles tens.
	"""
	dst = tree_dir(tree) / build_dir_name(variant, arch)
	if dst.exists():
		return
	# The other tree's same kernel first: it differs in the series' files
	# only. A variant of the same tree differs in its config.
	other = [t for t in TREES if t != tree]
	sources = [(t, variant) for t in other] + ([(tree, '')] if variant else [])
	for t, v in sources:
		src = tree_dir(t) / build_dir_name(v, arch)
		if kernel_image(t, v, arch).exists():
			break
	else:
		return
	log(f'build {label(tree, variant, arch)}: starting from the objects of '
	    f'{label(t, v, arch)}')

	def touch_series_files(_: Path) -> None:
		if t == tree:
			return
		pristine = unpack_pristine()
		now = time.time()
		for path in set(desired_files('ours', pristine)) | set(desired_files('base', pristine)):
			f = tree_dir(tree) / path
			if f.exists():
				os.utime(f, (now, now))

	copy_dir(src, dst, touch_series_files)


def check_image_tree(tree: str, variant: str = '', arch: str = ARCH) -> None:
	"""Raise Failed unless the kernel built is tree's (ours has the core)."""
	smap = tree_dir(tree) / build_dir_name(variant, arch) / 'System.map'
	if not smap.exists():
		return
	has = re.search(rf' {OURS_ONLY_SYMBOL}$', smap.read_text(), re.M) is not None
	if has != (tree == 'ours'):
		raise Failed(f'build {label(tree, variant, arch)}: {smap} '
			     f'{"has" if has else "lacks"} {OURS_ONLY_SYMBOL}: not the {tree} kernel')


HANDOVER_MODULES = ('tb_bc_handover_a', 'tb_bc_handover_b')


def build_modules(tree: str, variant: str = '', arch: str = ARCH) -> Dict[str, Path]:
	"""Build guest/tb_bc_handover.c against tree's built kernel, twice (as
	HANDOVER_MODULES); return {guest path: .ko} for the initramfs."""
	stage = CACHE / 'modules' / label(tree, variant, arch)
	stage.mkdir(parents=True, exist_ok=True)
	src = (TOOLS / 'guest' / 'tb_bc_handover.c').read_text()
	for m in HANDOVER_MODULES:
		f = stage / f'{m}.c'
		if not f.exists() or f.read_text() != src:
			f.write_text(src)
	(stage / 'Kbuild').write_text(f'obj-m := {" ".join(m + ".o" for m in HANDOVER_MODULES)}\n')
	make = ['make', f'ARCH={arch}', f'O={build_dir_name(variant, arch)}', f'--jobs={JOBS}',
		f'CC={cc(arch)}', f'M={stage}', 'modules']
	if arches.ARCHES[arch].cross:
		make.insert(2, f'CROSS_COMPILE={arches.ARCHES[arch].cross}')
	logfile = RUNS / f'modules-{label(tree, variant, arch)}.log'
	rc, _ = run_logged(make, logfile, f'modules {label(tree, variant, arch)}',
			   cwd=tree_dir(tree), env=build_env())
	kos = {f'/lib/tb/{m}.ko': stage / f'{m}.ko' for m in HANDOVER_MODULES}
	if rc or not all(k.exists() for k in kos.values()):
		raise Failed(f'building the hand-over modules failed, log {logfile}:\n'
			     f'{tail(logfile, 3000)}')
	return kos


def build_or_die(tree: str, variant: str = '', prepare: bool = True,
		 arch: str = ARCH) -> Path:
	try:
		return build(tree, variant, prepare, arch)
	except Failed as e:
		die(str(e))


# ---------------------------------------------------------------- kunit

def kunit_dir(tree: str, variant: str = '', arch: str = ARCH) -> Path:
	return RUNS / f'kunit-{label(tree, variant, arch)}'


def _kunit_progress(logfile: Path) -> str:
	text = tail(logfile, 10**7)
	done = len(re.findall(r'\[(PASSED|FAILED|SKIPPED|CRASHED)\]', text))
	return f'{done} results so far' if done else 'building or booting'


def kunit(tree: str, variant: str = '', filters: Sequence[str] = (), arch: str = ARCH,
	  qemu_args: Sequence[str] = ()) -> List[Row]:
	"""Run the KUnit suites of tree; return a row per case.

	The kernel is built first (build()); kunit.py then only boots it, with
	4 CPUs and qemu_args.
	"""
	src, args = kunit_args(tree, variant, arch)
	name = label(tree, variant, arch)
	res = kunit_dir(tree, variant, arch)
	shutil.rmtree(res, ignore_errors=True)
	res.mkdir(parents=True)
	js = res / 'results.json'
	cmd = kunit_py('run', *args, '--jobs', str(JOBS), *boot_args(arch, qemu_args),
		       f'--json={js}', *filters)
	logfile = res / 'output.log'
	run_logged(cmd, logfile, f'kunit {name}', cwd=src, env=build_env(),
		   progress=_kunit_progress)
	rows = kunit_rows(js.read_text() if js.exists() else '', tail(logfile, 10**8),
			  f'kunit/{name}', res)
	if tree == 'base':
		rows = known_failures(rows, patchset.known_base_failures())
	log(f'kunit {name}: results in {res}')
	return rows


def known_failures(rows: Sequence[Row], known: Dict[str, str]) -> List[Row]:
	"""The base's rows, those of the cases a fix names (known: {case
	name: fix slug}) expected to fail (results.expect_failure()), naming
	the fix."""
	out = []
	for row in rows:
		case = next((c for c in re.split(r'[/.]', row.name) if c in known), None)
		if case:
			row = expect_failure(row, 'known failure of the base, fixed by the '
					     f'series\' {known[case]}')
		out.append(row)
	return out


NO_RESULT = '(no result: crash or timeout)'


def kunit_rows(json_text: str, logtext: str, prefix: str,
	       res: Union[str, Path] = '.') -> List[Row]:
	"""kunit.py's --json output and log -> a row per case."""
	if not json_text.strip():
		return [Row(f'{prefix}/run', Status.FAIL,
			    f'kunit.py gave no results, see {res}/output.log')]
	doc = json.loads(json_text)
	out: List[Row] = []

	def messages(name: str) -> List[str]:
		return re.findall(rf'# {re.escape(name)}: (?:EXPECTATION|ASSERTION) '
				  r'FAILED.*\n.*\n.*', logtext)

	def walk(node: Dict[str, Any], path: str) -> None:
		for case in node.get('test_cases', []):
			st = {'pass': Status.PASS, 'skip': Status.SKIP}.get(case['status'].lower(),
									    Status.FAIL)
			# a parameter's failure is reported under its case's name
			why = (messages(case['name']) or
			       (messages(node['name']) if st is Status.FAIL else []))
			# kunit.py's stand-in for the cases a crash cut off has no name
			case_name = case['name'] or NO_RESULT
			out.append(Row(f'{path}.{case_name}', st,
				       '\n'.join(why)[-2000:] or f'see {res}/output.log'))
		# a parameterised case is a group inside its suite's
		for sub in node.get('sub_groups', []):
			walk(sub, f'{path}/{sub["name"]}')
	walk(doc, prefix)
	if not out:
		out.append(Row(f'{prefix}/run', Status.FAIL, f'no test ran, see {res}/output.log'))
	return out
