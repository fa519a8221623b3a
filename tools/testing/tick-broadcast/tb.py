#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tb: workspace, builds and QEMU testbed of the tick broadcast series.

  tb.py deps                    install missing Debian packages
  tb.py prepare                 unpack the base, make the trees ours/ and base/
  tb.py build TREE              build TREE (ours or base) for QEMU x86_64
  tb.py initramfs               busybox + tbprobe initramfs
  tb.py report [TREE]           boot once with the deep state, print a report
  tb.py kunit TREE              KUnit suites of TREE under QEMU (kunit.py)
  tb.py scenario NAME TREE      run one QEMU scenario (see scenarios.py)
  tb.py check [--quick]         everything: static, KUnit, scenarios, both trees
  tb.py bench                   ours against the base, side by side (bench.py)

Everything that is not the repository lives in $TB_CACHE
(default ~/.cache/tick-broadcast): the pristine base unpacked once per
Debian package version, one source tree per flavour with its build
directory inside it, the initramfs and ccache.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parents[2]
CACHE = Path(os.environ.get('TB_CACHE', Path.home() / '.cache' / 'tick-broadcast'))
TARBALL = Path('/usr/src/linux-source-6.12.tar.xz')
BASE_PACKAGE = 'linux-source-6.12'
TREES = ('ours', 'base')
JOBS = os.cpu_count() or 2
ARCH = 'x86_64'

# command or file -> Debian package providing it
DEPENDS = {
	str(TARBALL): BASE_PACKAGE,
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
}


def log(msg):
	print(f'tb: {msg}', flush=True)


def die(msg):
	print(f'tb: error: {msg}', file=sys.stderr, flush=True)
	sys.exit(1)


def run(cmd, **kw):
	"""Run cmd, die with its name on failure."""
	r = subprocess.run(cmd, **kw)
	if r.returncode:
		die(f'command failed ({r.returncode}): {" ".join(map(str, cmd))}')
	return r


# ---------------------------------------------------------------- deps

def missing_packages(depends=None):
	miss = []
	for what, pkg in (depends or DEPENDS).items():
		found = Path(what).exists() if what.startswith('/') else shutil.which(what)
		if not found and pkg not in miss:
			miss.append(pkg)
	return miss


def cmd_deps(_args=None, depends=None):
	miss = missing_packages(depends)
	if not miss:
		return
	log(f'installing missing Debian packages: {" ".join(miss)}')
	if os.geteuid() != 0:
		die(f'not root: run "sudo apt-get install {" ".join(miss)}" first')
	env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
	for cmd in (['apt-get', 'update', '-q'],
		    ['apt-get', 'install', '-y', '-q', '--no-install-recommends'] + miss):
		r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL)
		if r.returncode:
			die(f'"{" ".join(cmd)}" failed; install {" ".join(miss)} by hand')
	still = missing_packages(depends)
	if still:
		die(f'still missing after apt-get: {" ".join(still)}')


# ---------------------------------------------------------------- workspace

def base_version():
	r = subprocess.run(['dpkg-query', '-W', '-f=${Version}', BASE_PACKAGE],
			   capture_output=True, text=True)
	if r.returncode or not r.stdout:
		die(f'{BASE_PACKAGE} is not installed (tb.py deps)')
	return re.sub(r'[^A-Za-z0-9.+-]', '_', r.stdout.strip())


def workdir():
	return CACHE / f'linux-{base_version()}'


def pristine_dir():
	return workdir() / 'pristine'


def tree_dir(tree):
	if tree not in TREES:
		die(f'unknown tree "{tree}" (want one of {", ".join(TREES)})')
	return workdir() / tree


def kernel_version(src):
	mk = (src / 'Makefile').read_text()
	v = {k: re.search(rf'^{k} = (\S*)', mk, re.M).group(1)
	     for k in ('VERSION', 'PATCHLEVEL', 'SUBLEVEL')}
	return f'{v["VERSION"]}.{v["PATCHLEVEL"]}.{v["SUBLEVEL"]}'


def unpack_pristine():
	dst = pristine_dir()
	if (dst / 'Makefile').exists():
		return dst
	dst.parent.mkdir(parents=True, exist_ok=True)
	tmp = Path(tempfile.mkdtemp(dir=dst.parent, prefix='unpack-'))
	log(f'unpacking {TARBALL} into {dst}')
	run(['tar', '-xJf', str(TARBALL), '-C', str(tmp)])
	top = [p for p in tmp.iterdir() if p.is_dir()]
	if len(top) != 1:
		die(f'unexpected layout of {TARBALL}')
	top[0].rename(dst)
	tmp.rmdir()
	return dst


def series_entries(tree):
	"""[(kind, repo path, tree path)] of the series for one tree."""
	out = []
	conf = TOOLS / 'series.conf'
	for n, line in enumerate(conf.read_text().splitlines(), 1):
		line = line.split('#', 1)[0].split()
		if not line:
			continue
		if len(line) < 3 or line[0] not in ('file', 'hunk'):
			die(f'{conf}:{n}: bad line')
		kind, path, trees = line[0], line[1], line[2:]
		if tree not in trees:
			continue
		src = REPO / path
		if not src.exists():
			die(f'{conf}:{n}: {path} does not exist')
		if kind == 'hunk':
			m = re.search(r'^\+\+\+ b/(\S+)', src.read_text(), re.M)
			if not m:
				die(f'{path}: no "+++ b/FILE" line')
			out.append((kind, src, m.group(1)))
		else:
			out.append((kind, src, path))
	return out


def desired_files(tree, pristine):
	"""{tree path: bytes} for every file the series sets in tree."""
	want = {}
	for kind, src, dst in series_entries(tree):
		if kind == 'file':
			want[dst] = src.read_bytes()
			continue
		with tempfile.TemporaryDirectory() as tmp:
			target = Path(tmp) / dst
			target.parent.mkdir(parents=True, exist_ok=True)
			if dst in want:
				target.write_bytes(want[dst])
			elif (pristine / dst).exists():
				shutil.copy(pristine / dst, target)
			r = subprocess.run(['patch', '-p1', '--no-backup-if-mismatch', '-s',
					    '-d', tmp, '-i', str(src)],
					   capture_output=True, text=True)
			if r.returncode:
				die(f'hunk {src.relative_to(REPO)} does not apply to {dst}:\n'
				    f'{r.stdout}{r.stderr}')
			want[dst] = target.read_bytes()
	return want


def prepare_tree(tree):
	pristine = unpack_pristine()
	dst = tree_dir(tree)
	if not (dst / 'Makefile').exists():
		log(f'creating tree {tree} at {dst}')
		tmp = dst.with_name(dst.name + '.tmp')
		shutil.rmtree(tmp, ignore_errors=True)
		run(['cp', '-a', str(pristine), str(tmp)])
		tmp.rename(dst)
	want = desired_files(tree, pristine)
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
		if f.exists() and f.read_bytes() == data:
			continue
		f.parent.mkdir(parents=True, exist_ok=True)
		f.write_bytes(data)
		changed += 1
	stamp.write_text('\n'.join(sorted(want)) + '\n')
	log(f'tree {tree}: Linux {kernel_version(dst)} (Debian {BASE_PACKAGE} '
	    f'{base_version()}), {len(want)} series files, {changed} updated')
	return dst


def cmd_prepare(_args=None):
	for t in TREES:
		prepare_tree(t)


# ---------------------------------------------------------------- build

def build_env():
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


def build_dir_name(variant=''):
	return f'.build-{ARCH}' + (f'-{variant}' if variant else '')


def kunit_args(tree, variant=''):
	src = tree_dir(tree)
	args = ['--arch', ARCH, '--build_dir', build_dir_name(variant),
		'--kunitconfig', 'kernel/time/tests/.kunitconfig',
		'--kunitconfig', str(TOOLS / 'configs' / f'{ARCH}.config'),
		'--make_options', 'CC=ccache gcc', '--jobs', str(JOBS)]
	extra = TOOLS / 'configs' / f'{ARCH}-{tree}.config'
	if extra.exists():
		args += ['--kunitconfig', str(extra)]
	if variant:
		args += ['--kunitconfig', str(TOOLS / 'configs' / f'{variant}.config')]
	return src, args


def build(tree, variant=''):
	src = prepare_tree(tree)
	_, args = kunit_args(tree, variant)
	log(f'building {tree} {variant or "default"} in {src / build_dir_name(variant)}')
	t0 = time.time()
	r = subprocess.run([sys.executable, 'tools/testing/kunit/kunit.py', 'build'] + args,
			   cwd=src, env=build_env(), capture_output=True, text=True)
	if r.returncode:
		sys.stdout.write(r.stdout[-6000:] + r.stderr[-6000:])
		die(f'build of {tree} failed')
	log(f'built {tree} in {time.time() - t0:.0f} s')
	return src / build_dir_name(variant) / 'arch/x86/boot/bzImage'


def cmd_build(args):
	build(args.tree, args.variant)


# ---------------------------------------------------------------- initramfs

def initramfs():
	out = CACHE / f'initramfs-{ARCH}.cpio'
	guest = TOOLS / 'guest'
	inputs = [guest / 'init', guest / 'tbprobe.c', Path('/bin/busybox'), Path(__file__)]
	if out.exists() and all(out.stat().st_mtime >= p.stat().st_mtime for p in inputs):
		return out
	stage = CACHE / 'initramfs-stage'
	shutil.rmtree(stage, ignore_errors=True)
	stage.mkdir(parents=True)
	run(['gcc', '-static', '-O2', '-Wall', '-o', str(stage / 'tbprobe'),
	     str(guest / 'tbprobe.c')])
	gen = stage / 'gen_init_cpio'
	run(['gcc', '-O2', '-o', str(gen), str(unpack_pristine() / 'usr/gen_init_cpio.c')])
	spec = stage / 'spec'
	spec.write_text('\n'.join([
		'dir /dev 755 0 0',
		'nod /dev/console 600 0 0 c 5 1',
		'dir /proc 755 0 0', 'dir /sys 755 0 0', 'dir /tmp 1777 0 0',
		'dir /bin 755 0 0', 'dir /sbin 755 0 0', 'dir /root 700 0 0',
		'file /bin/busybox /bin/busybox 755 0 0',
		f'file /bin/tbprobe {stage / "tbprobe"} 755 0 0',
		f'file /init {guest / "init"} 755 0 0', '']))
	with open(out, 'wb') as f:
		run([str(gen), str(spec)], stdout=f)
	return out


# ---------------------------------------------------------------- boot

def qemu_cmd(kernel, initrd, append, console, data, smp=4, cpu='qemu64', extra=()):
	return ['qemu-system-x86_64', '-M', 'q35', '-cpu', cpu, '-smp', str(smp),
		'-m', '512', '-nodefaults', '-no-reboot', '-display', 'none',
		'-kernel', str(kernel), '-initrd', str(initrd), '-append', append,
		'-chardev', f'file,id=con,path={console}', '-serial', 'chardev:con',
		'-chardev', f'file,id=data,path={data}', '-serial', 'chardev:data',
		'-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04',
		'-monitor', f'unix:{Path(console).parent / "monitor.sock"},server,nowait'] + list(extra)


GUEST_DONE = 99		# init writes 0x31 to isa-debug-exit: 0x31 * 2 + 1
STALLED = re.compile(r'detected stalls? on CPU|soft lockup|hard LOCKUP|Kernel panic')
QUIET_LIMIT = 30	# seconds without a byte on console or data channel
SUSPEND_ENTRY = 'PM: suspend entry (s2idle)'


def monitor(sock, command):
	"""Send one command to the QEMU human monitor at sock."""
	import socket
	try:
		with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
			s.settimeout(5)
			s.connect(str(sock))
			s.sendall(command.encode() + b'\n')
			time.sleep(0.2)
	except OSError as e:
		log(f'monitor {sock}: {e}')


def watch(cmd, console, data, timeout):
	"""Run QEMU until it exits, stalls or goes quiet; return a status.

	A lost wakeup shows as a guest that stops making progress: an RCU or
	soft lockup report on the console, or no output at all for a while.
	Either ends the boot at once instead of waiting out the timeout.
	"""
	proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
				stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
	t0 = last = time.time()
	size = -1
	status = None
	woken = 0
	while status is None:
		try:
			rc = proc.wait(timeout=0.5)
			return 'done' if rc == GUEST_DONE else f'exit {rc}'
		except subprocess.TimeoutExpired:
			pass
		now = time.time()
		cur = sum(p.stat().st_size for p in (console, data) if p.exists())
		if cur != size:
			size, last = cur, now
		text = console.read_text(errors='replace') if console.exists() else ''
		# Suspend to idle: press a key (a wakeup source) 2 s after entry.
		entries = text.count(SUSPEND_ENTRY)
		if entries > woken and now - last > 2:
			woken = entries
			monitor(console.parent / 'monitor.sock', 'sendkey a')
		if STALLED.search(text):
			status = f'stall ({STALLED.search(text).group(0)} after {now - t0:.0f} s)'
		elif now - last > QUIET_LIMIT:
			status = f'hang (no output for {QUIET_LIMIT} s)'
		elif now - t0 > timeout:
			status = f'hang (not finished after {timeout} s)'
	proc.kill()
	proc.wait()
	return status


def boot(kernel, plan, outdir, cmdline=(), cpu='qemu64', smp=4, qemu=(),
	 timeout=180, seed=1):
	"""Boot once; return (status, console text, data text, seconds)."""
	outdir.mkdir(parents=True, exist_ok=True)
	console, data = outdir / 'console.log', outdir / 'data.log'
	append = ' '.join(['console=ttyS0', 'panic=-1', 'kunit.enable=0',
			   f'tb.plan={",".join(plan)}', f'tb.seed={seed}'] + list(cmdline))
	cmd = qemu_cmd(kernel, initramfs(), append, console, data, smp, cpu, qemu)
	(outdir / 'qemu.cmd').write_text(' '.join(cmd) + '\n')
	t0 = time.time()
	status = watch(cmd, console, data, timeout)
	secs = time.time() - t0
	rd = lambda p: p.read_text(errors='replace') if p.exists() else ''
	return status, rd(console), rd(data), secs


def cmd_report(args):
	import scenarios
	kernel = build(args.tree)
	out = CACHE / 'runs' / f'report-{args.tree}'
	shutil.rmtree(out, ignore_errors=True)
	sc = scenarios.SCENARIOS['hpet-irqoff']
	print(scenarios.report(args.tree, sc, *boot_scenario(kernel, sc, out)))


def boot_scenario(kernel, sc, out, seed=1):
	status, con, data, secs = boot(kernel, sc['plan'], out, sc.get('cmdline', ()),
				       sc.get('cpu', 'qemu64'), sc.get('smp', 4),
				       sc.get('qemu', ()), sc.get('timeout', 150), seed)
	return status, con, data, secs


# ---------------------------------------------------------------- kunit

def kunit(tree, variant=''):
	"""Run the KUnit suites of tree; return [(name, 'pass'|'fail'|'skip', detail)]."""
	src, args = kunit_args(tree, variant)
	prepare_tree(tree)
	res = CACHE / 'runs' / f'kunit-{tree}{"-" + variant if variant else ""}'
	shutil.rmtree(res, ignore_errors=True)
	res.mkdir(parents=True)
	js = res / 'results.json'
	cmd = [sys.executable, 'tools/testing/kunit/kunit.py', 'run'] + args + [
		'--qemu_args', '-smp 4', '--timeout', '900', f'--json={js}']
	r = subprocess.run(cmd, cwd=src, env=build_env(), capture_output=True, text=True)
	(res / 'output.log').write_text(r.stdout + r.stderr)
	prefix = f'kunit/{tree}{"-" + variant if variant else ""}'
	if not js.exists() or not js.read_text().strip():
		return [(f'{prefix}/run', 'fail', f'kunit.py exited {r.returncode}, see {res}/output.log')]
	doc = json.loads(js.read_text())
	logtext = (res / 'output.log').read_text()
	out = []

	def walk(node, path):
		for case in node.get('test_cases', []):
			st = case['status'].lower()
			st = {'pass': 'pass', 'skip': 'skip'}.get(st, 'fail')
			why = re.findall(rf'# {re.escape(case["name"])}: (?:EXPECTATION|ASSERTION) FAILED.*\n.*\n.*',
					 logtext)
			out.append((f'{path}.{case["name"]}', st,
				    '\n'.join(why)[-2000:] or f'see {res}/output.log'))
		for sub in node.get('sub_groups', []):
			walk(sub, f'{prefix}/{sub["name"]}')
	walk(doc, prefix)
	if not out:
		out.append((f'{prefix}/run', 'fail', f'no test ran, see {res}/output.log'))
	return out


def cmd_kunit(args):
	build(args.tree)
	bad = 0
	for name, st, detail in kunit(args.tree):
		print(f'{st.upper():4} {name}')
		if st == 'fail':
			bad += 1
			print(detail)
	sys.exit(1 if bad else 0)


# ---------------------------------------------------------------- main

def main():
	sys.path.insert(0, str(TOOLS))
	p = argparse.ArgumentParser(description=__doc__,
				    formatter_class=argparse.RawDescriptionHelpFormatter)
	sub = p.add_subparsers(dest='cmd', required=True)
	sub.add_parser('deps').set_defaults(fn=cmd_deps)
	sub.add_parser('prepare').set_defaults(fn=cmd_prepare)
	b = sub.add_parser('build')
	b.add_argument('tree', choices=TREES)
	b.add_argument('--variant', default='')
	b.set_defaults(fn=cmd_build)
	sub.add_parser('initramfs').set_defaults(fn=lambda a: print(initramfs()))
	r = sub.add_parser('report')
	r.add_argument('tree', nargs='?', default='ours', choices=TREES)
	r.set_defaults(fn=cmd_report)
	k = sub.add_parser('kunit')
	k.add_argument('tree', choices=TREES)
	k.set_defaults(fn=cmd_kunit)
	import bench
	import check
	import scenarios
	scenarios.add_commands(sub)
	check.add_commands(sub)
	bench.add_commands(sub)
	args = p.parse_args()
	if args.cmd != 'deps':
		cmd_deps()
	args.fn(args)


if __name__ == '__main__':
	main()
