# SPDX-License-Identifier: GPL-2.0
"""The QEMU side of the testbed: initramfs, boot, watchdog, monitor.

boot() runs one guest with the initramfs of guest/ and a plan on the
command line (tb.plan=...), and writes into its output directory:
console.log (the kernel's console and the guest's heartbeat), data.log
(the "@@" lines, see guestdata.py), qemu.cmd and monitor.sock.

  x86_64  -M q35 -cpu qemu64 (no ARAT: the HPET or PIT broadcasts); the
          console on the first serial port, the data on the second; the
          guest ends by writing to isa-debug-exit (QEMU exits with 99)
  arm64   -M virt -cpu cortex-a57 with a device tree whose arch timer
          is not "always-on" (arm64_dtb(): the timer gets C3STOP and the
          broadcast runs on the hrtimer pseudo device); the console on
          the PL011, the data on a virtio console (hvc0); the guest ends
          by powering off through PSCI (QEMU exits with 0)

The watchdog (Watchdog) ends a boot that stops making progress instead
of waiting out the timeout, because a lost wakeup looks like that. It
tells two silences apart:

  hang   the plan made no progress (no new byte on the data channel or
         the console besides the heartbeat) for QUIET_LIMIT seconds
         while the guest's heartbeat (guest/init, every 2 s) went on for
         at least QUIET_BEATS beats: the guest runs, the plan is stuck.
  quiet  nothing at all, not even the heartbeat, for SILENT_LIMIT
         seconds: a whole-guest hang, or a host so loaded that the vCPUs
         do not run (other QEMU guests and builds on 2 cores).
         Reported as such; runs.py retries those. Before the first
         heartbeat the kernel is still booting, and under -icount some
         of its silent steps take wall-clock time in proportion to the
         vCPUs (64: 80 to 90 s between two lines, with or without the
         counting plugin): the limit grows with them there
         (boot_silent_limit()).
  stall  an RCU stall / soft lockup / panic report on the console.
"""

import re
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import guestdata
import hostdelay
import workspace
from arches import ARCHES
from progress import HEARTBEAT, elapsed, log, run

TOOLS = Path(__file__).resolve().parent
GUEST = TOOLS / 'guest'

MEMORY = '512'
STALLED = re.compile(r'detected stalls? on CPU|soft lockup|hard LOCKUP|Kernel panic')
QUIET_LIMIT = 30	# seconds without plan progress while the heartbeat goes on
QUIET_BEATS = 10	# ... and at least this many heartbeats meanwhile
SILENT_LIMIT = 90	# seconds without any output at all


def boot_silent_limit(smp: int) -> float:
	"""SILENT_LIMIT before the guest's first heartbeat, for smp vCPUs."""
	return SILENT_LIMIT * max(1, smp / 16)
# A suspend's entry, and what wakes the guest from it through the monitor:
# a key press from suspend to idle (the i8042 is a wakeup source), QEMU's
# system_wakeup from suspend to RAM (S3). From its second S3 on, a guest
# of QEMU 7.2 came back within a second without one in every boot seen
# (the first stays suspended until it comes; cause not known): the resume
# path runs all the same ("Waking up from system sleep state S3").
SUSPEND_WAKE = {'PM: suspend entry (s2idle)': 'sendkey a',
		'PM: suspend entry (deep)': 'system_wakeup'}
SUSPEND_EXIT = 'PM: suspend exit'
KEY_DELAY = 2		# seconds of silence after the entry before the wakeup
KEY_REPEAT = 8		# ... and between two while the guest stays suspended


def busybox(arch: str) -> Path:
	"""The static busybox for arch: the host's, or Debian's package for arch."""
	return ARCHES[arch].busybox or workspace.foreign_busybox(arch)


def initramfs(arch: str = workspace.ARCH) -> Path:
	"""busybox + tbprobe + guest/init as a cpio; rebuilt when an input changes."""
	out = workspace.CACHE / f'initramfs-{arch}.cpio'
	bb = busybox(arch)
	inputs = [GUEST / 'init', GUEST / 'tbprobe.c', bb, Path(__file__)]
	if out.exists() and all(out.stat().st_mtime >= p.stat().st_mtime for p in inputs):
		return out
	log(f'building the initramfs {out}')
	stage = workspace.CACHE / f'initramfs-stage-{arch}'
	shutil.rmtree(stage, ignore_errors=True)
	stage.mkdir(parents=True)
	run([f'{ARCHES[arch].cross}gcc', '-static', '-O2', '-Wall', '-o',
	     str(stage / 'tbprobe'), str(GUEST / 'tbprobe.c')])
	gen = stage / 'gen_init_cpio'
	run(['gcc', '-O2', '-o', str(gen),
	     str(workspace.unpack_pristine() / 'usr/gen_init_cpio.c')])
	spec = stage / 'spec'
	spec.write_text('\n'.join([
		'dir /dev 755 0 0',
		'nod /dev/console 600 0 0 c 5 1',
		'dir /proc 755 0 0', 'dir /sys 755 0 0', 'dir /tmp 1777 0 0',
		'dir /bin 755 0 0', 'dir /sbin 755 0 0', 'dir /root 700 0 0',
		f'file /bin/busybox {bb} 755 0 0',
		f'file /bin/tbprobe {stage / "tbprobe"} 755 0 0',
		f'file /init {GUEST / "init"} 755 0 0', '']))
	tmp = out.with_suffix('.tmp')
	with open(tmp, 'wb') as f:
		run([str(gen), str(spec)], stdout=f)
	tmp.rename(out)
	return out


def initramfs_with(files: Optional[Dict[str, Path]], outdir: Path,
		   arch: str = workspace.ARCH) -> Path:
	"""The initramfs plus files ({guest path: host path}) as one initrd in
	outdir: a second cpio appended (the kernel unpacks both)."""
	base = initramfs(arch)
	if not files:
		return base
	spec = outdir / 'extra.spec'
	dirs = sorted({str(q) for g in files for q in Path(g).parents if str(q) != '/'})
	spec.write_text('\n'.join([f'dir {d} 755 0 0' for d in dirs] +
				  [f'file {g} {h} 644 0 0' for g, h in files.items()]) + '\n')
	out = outdir / 'initrd.cpio'
	with open(out, 'wb') as f:
		f.write(base.read_bytes())
		f.flush()
		run([str(workspace.CACHE / f'initramfs-stage-{arch}' / 'gen_init_cpio'), str(spec)],
		    stdout=f)
	return out


def arm64_dtb(smp: int, cpu: str = ARCHES['arm64'].cpu, memory: str = MEMORY) -> Path:
	"""QEMU virt's device tree for this machine, without the arch timer's
	"always-on": Linux then flags the timer C3STOP and needs broadcast.

	Dumped by QEMU (-M virt,dumpdtb=) with the machine's -smp and -m, and
	recompiled by dtc (the raw dump passed to -dtb boots to a silent
	console). Without the random seeds (dtb-randomness=off): QEMU fills
	any rng-seed or kaslr-seed in a -dtb anew at every boot, and the
	guest's random numbers would make deterministic runs differ.
	"""
	name = re.sub(r'[^\w.-]', '_', f'virt-{cpu}-smp{smp}-m{memory}')
	out = workspace.CACHE / 'dtb' / f'{name}.dtb'
	if out.exists() and out.stat().st_mtime >= Path(__file__).stat().st_mtime:
		return out
	out.parent.mkdir(parents=True, exist_ok=True)
	raw = out.with_suffix('.raw')
	run(['qemu-system-aarch64', '-M', f'virt,dumpdtb={raw},dtb-randomness=off', '-cpu', cpu, '-smp', str(smp),
	     '-m', memory, '-nodefaults', '-display', 'none'], stderr=subprocess.DEVNULL)
	dts = subprocess.run(['dtc', '-q', '-I', 'dtb', '-O', 'dts', str(raw)],
			     capture_output=True, text=True, check=True).stdout
	if re.search(r'\b(rng|kaslr)-seed\b', dts):
		raise RuntimeError(f'{raw}: random seeds left in the device tree')
	dts, n = re.subn(r'(\n\s*timer \{[^}]*?)\n\s*always-on;', r'\1', dts)
	if n != 1:
		raise RuntimeError(f'{raw}: no "always-on" in the timer node to remove')
	with open(out.with_suffix('.tmp'), 'wb') as f:
		subprocess.run(['dtc', '-q', '-I', 'dts', '-O', 'dtb'], input=dts.encode(),
			       stdout=f, check=True)
	out.with_suffix('.tmp').rename(out)
	raw.unlink()
	return out


# kunit.py's arm64 machine (tools/testing/kunit/qemu_configs/arm64.py)
KUNIT_ARM64_CPU, KUNIT_MEMORY = 'max,pauth-impdef=on', '1024'


def kunit_arm64_args(smp: int = 4) -> List[str]:
	"""kunit.py --qemu_args for arm64: its machine's device tree without the
	arch timer's "always-on", so that the suites run with the hrtimer
	broadcast as the scenarios do."""
	return ['-dtb', str(arm64_dtb(smp, KUNIT_ARM64_CPU, KUNIT_MEMORY))]


@dataclass(kw_only=True)
class Boot:
	"""What one guest boot is: the kernel, the guest's plan and the machine.
	Built by keyword.

	kernel		the image to boot
	plan		the guest's steps (guest/init), passed as tb.plan=
	outdir		where console.log, data.log, qemu.cmd and monitor.sock go
	cmdline		more kernel command-line words
	cpu		QEMU -cpu (default: arch's, arches.py)
	smp		vCPUs
	qemu		more QEMU arguments
	timeout		seconds before the watchdog ends the boot
	seed		tb.seed= for the guest's random choices
	what		the name the progress lines use (default: the outdir's)
	arch		x86_64 or arm64
	timer_stops	arm64: False boots QEMU's own device tree (arch timer
			"always-on": no broadcast, the control)
	files		{guest path: host path} added to the initramfs
	dtb		arm64: this device tree instead of arm64_dtb()'s or
			QEMU's (firmware.psci_dtb(): idle states for cpuidle-psci)
	"""
	kernel: Path
	plan: Sequence[str]
	outdir: Path
	cmdline: Sequence[str] = ()
	cpu: Optional[str] = None
	smp: int = 4
	qemu: Sequence[str] = ()
	timeout: int = 180
	seed: int = 1
	what: Optional[str] = None
	arch: str = workspace.ARCH
	timer_stops: bool = True
	files: Optional[Dict[str, Path]] = None
	dtb: Optional[Path] = None

	def append(self) -> str:
		"""The kernel command line."""
		return ' '.join([f'console={ARCHES[self.arch].console}', 'panic=-1',
				 'kunit.enable=0', f'tb.plan={",".join(self.plan)}',
				 f'tb.seed={self.seed}'] + list(self.cmdline))


@dataclass
class Booted:
	"""How a boot ended (status: "done" or why not) and what it wrote."""
	status: str
	console: str
	data: str
	secs: float


def qemu_cmd(b: Boot, initrd: Path, console: Path, data: Path) -> List[str]:
	"""The QEMU command line of boot b."""
	arch = ARCHES[b.arch]
	cpu = b.cpu or arch.cpu
	common = ['-smp', str(b.smp), '-m', MEMORY, '-nodefaults', '-no-reboot',
		  '-display', 'none', '-kernel', str(b.kernel), '-initrd', str(initrd),
		  '-append', b.append(),
		  '-chardev', f'file,id=con,path={console}',
		  '-chardev', f'file,id=data,path={data}',
		  '-monitor', f'unix:{Path(console).parent / "monitor.sock"},server,nowait']
	if b.arch == 'arm64':
		dtb = (['-dtb', str(b.dtb)] if b.dtb else
		       ['-dtb', str(arm64_dtb(b.smp, cpu))] if b.timer_stops else [])
		return ([arch.qemu, '-M', arch.machine, '-cpu', cpu] + common + dtb +
			['-serial', 'chardev:con',
			 '-device', 'virtio-serial-device', '-device', 'virtconsole,chardev=data']
			+ list(b.qemu))
	return ([arch.qemu, '-M', arch.machine, '-cpu', cpu] + common +
		['-serial', 'chardev:con', '-serial', 'chardev:data',
		 '-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04'] + list(b.qemu))


def monitor(sock: Path, command: str) -> None:
	"""Send one command to the QEMU human monitor at sock."""
	try:
		with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
			s.settimeout(5)
			s.connect(str(sock))
			s.sendall(command.encode() + b'\n')
			time.sleep(0.2)
	except OSError as e:
		log(f'monitor {sock}: {e}')


class Watchdog:
	"""Decides, from what the guest wrote so far, whether a boot is stuck.

	Pure logic (no I/O), so that it can be tested on recorded output:
	feed it update(now, console_text, data_text) and it returns None
	while the boot is healthy, else the status that ends it.
	"""

	def __init__(self, t0: float, timeout: float, quiet: float = QUIET_LIMIT,
		     beats: int = QUIET_BEATS, silent: float = SILENT_LIMIT,
		     boot_silent: Optional[float] = None) -> None:
		self.t0 = t0
		self.timeout = timeout
		self.quiet, self.beats, self.silent = quiet, beats, silent
		# silent before the first heartbeat
		self.boot_silent = silent if boot_silent is None else boot_silent
		self.progress = -1		# bytes of output besides heartbeats
		self.total = -1			# all bytes
		self.last_progress = self.last_any = t0
		self.beats_at_progress = 0
		self.nbeats = 0

	def update(self, now: float, console: str, data: str) -> Optional[str]:
		nbeats = len(guestdata.heartbeats(console))
		progress = len(data) + len(guestdata.strip_heartbeats(console))
		total = len(data) + len(console)
		if progress != self.progress:
			self.progress, self.last_progress = progress, now
			self.beats_at_progress = nbeats
		if total != self.total:
			self.total, self.last_any = total, now
		self.nbeats = nbeats
		stalled = STALLED.search(console)
		if stalled:
			return f'stall ({stalled.group(0)} after {now - self.t0:.0f} s)'
		beats = nbeats - self.beats_at_progress
		if now - self.last_progress > self.quiet and beats >= self.beats:
			return (f'hang (no progress for {now - self.last_progress:.0f} s while the '
				f'guest heartbeat went on: {beats} beats)')
		silent = self.silent if nbeats else self.boot_silent
		if now - self.last_any > silent:
			return (f'quiet (no output at all, not even the heartbeat, for '
				f'{silent:.0f} s: hung guest or starved host)')
		if now - self.t0 > self.timeout:
			return f'timeout (not finished after {self.timeout} s)'
		return None


def _read(p: Path) -> str:
	try:
		return p.read_text(errors='replace')
	except OSError:
		return ''


def _where(data: str) -> str:
	"""The guest's last step, from its last @@ line."""
	lines = [ln for ln in data.splitlines() if ln.startswith('@@') and
		 not ln.startswith('@@raw')]
	return lines[-1][:60] if lines else 'booting'


def watch(cmd: Sequence[str], console: Path, data: Path, timeout: float, what: str = 'boot',
	  done: int = ARCHES[workspace.ARCH].guest_done,
	  host: Optional[hostdelay.HostDelays] = None, smp: int = 4) -> str:
	"""Run QEMU (smp vCPUs) until it exits, stalls or stops making
	progress; return a status. host, if given, samples what the host
	delayed QEMU's threads."""
	proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
				stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
	if host is not None:
		host.pid = proc.pid
	t0 = next_beat = time.time()
	next_beat += HEARTBEAT
	dog = Watchdog(t0, timeout, boot_silent=boot_silent_limit(smp))
	pressed = 0.0
	status: Optional[str] = None
	try:
		while status is None:
			try:
				rc = proc.wait(timeout=hostdelay.POLL)
				return 'done' if rc == done else f'exit {rc}'
			except subprocess.TimeoutExpired:
				pass
			now = time.time()
			con, dat = _read(console), _read(data)
			if host is not None:
				host.update(now, dat)
			status = dog.update(now, con, dat)
			# Suspend: wake the guest once it has been silent for
			# KEY_DELAY s after the entry, and again every KEY_REPEAT s
			# while it does not resume: on a loaded host the silence
			# may come before the keyboard is armed as a wakeup source
			# (suspend to idle), and that key is lost.
			entries = sum(con.count(e) for e in SUSPEND_WAKE)
			if (entries > con.count(SUSPEND_EXIT)
			    and now - dog.last_any > KEY_DELAY and now - pressed > KEY_REPEAT):
				pressed = now
				last = max(SUSPEND_WAKE, key=con.rfind)
				log(f'{what}: {last} ({entries}): {SUSPEND_WAKE[last]}')
				monitor(console.parent / 'monitor.sock', SUSPEND_WAKE[last])
			if now >= next_beat:
				next_beat = now + HEARTBEAT
				hb = guestdata.heartbeats(con)
				log(f'{what}: {elapsed(now - t0)}, guest at "{_where(dat)}"'
				    + (f', guest uptime {hb[-1]:.0f} s' if hb else ''))
	finally:
		if proc.poll() is None:
			proc.kill()
			proc.wait()
		if host is not None:
			host.update(time.time(), _read(data))
	return status


def boot(b: Boot) -> Booted:
	"""Boot b once (a Boot); return a Booted."""
	outdir = b.outdir
	outdir.mkdir(parents=True, exist_ok=True)
	console, data = outdir / 'console.log', outdir / 'data.log'
	for p in (console, data):
		if p.exists():
			p.unlink()
	cmd = qemu_cmd(b, initramfs_with(b.files, outdir, b.arch), console, data)
	(outdir / 'qemu.cmd').write_text(' '.join(cmd) + '\n')
	what = b.what or f'boot {outdir.name}'
	log(f'{what}: started (timeout {b.timeout} s), logs in {outdir}')
	t0 = time.time()
	host = hostdelay.HostDelays()
	status = watch(cmd, console, data, b.timeout, what, ARCHES[b.arch].guest_done, host, b.smp)
	secs = time.time() - t0
	log(f'{what}: {status} in {elapsed(secs)}')
	# QEMU has ended: the host's lines go after the guest's.
	with data.open('a') as f:
		f.write(host.lines())
	return Booted(status, _read(console), _read(data), secs)
