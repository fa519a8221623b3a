# SPDX-License-Identifier: GPL-2.0
"""The QEMU side of the testbed: initramfs, boot, watchdog, monitor.

boot() runs one x86_64 guest (-M q35, 4 vCPUs by default) with the
initramfs of guest/ and a plan on the command line (tb.plan=...), and
writes into its output directory: console.log (first serial port: the
kernel's console and the guest's heartbeat), data.log (second serial
port: the "@@" lines, see guestdata.py), qemu.cmd and monitor.sock.

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
         Reported as such; runs.py retries those.
  stall  an RCU stall / soft lockup / panic report on the console.
"""

import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import guestdata
import workspace
from progress import HEARTBEAT, elapsed, log, run

TOOLS = Path(__file__).resolve().parent
GUEST = TOOLS / 'guest'

GUEST_DONE = 99		# init writes 0x31 to isa-debug-exit: 0x31 * 2 + 1
STALLED = re.compile(r'detected stalls? on CPU|soft lockup|hard LOCKUP|Kernel panic')
QUIET_LIMIT = 30	# seconds without plan progress while the heartbeat goes on
QUIET_BEATS = 10	# ... and at least this many heartbeats meanwhile
SILENT_LIMIT = 90	# seconds without any output at all
SUSPEND_ENTRY = 'PM: suspend entry (s2idle)'
SUSPEND_EXIT = 'PM: suspend exit'
KEY_DELAY = 2		# s2idle: seconds of silence after the entry before the key
KEY_REPEAT = 8		# ... and between two keys while the guest stays suspended


def initramfs():
	"""busybox + tbprobe + guest/init as a cpio; rebuilt when an input changes."""
	out = workspace.CACHE / f'initramfs-{workspace.ARCH}.cpio'
	inputs = [GUEST / 'init', GUEST / 'tbprobe.c', Path('/bin/busybox'), Path(__file__)]
	if out.exists() and all(out.stat().st_mtime >= p.stat().st_mtime for p in inputs):
		return out
	log(f'building the initramfs {out}')
	stage = workspace.CACHE / 'initramfs-stage'
	shutil.rmtree(stage, ignore_errors=True)
	stage.mkdir(parents=True)
	run(['gcc', '-static', '-O2', '-Wall', '-o', str(stage / 'tbprobe'),
	     str(GUEST / 'tbprobe.c')])
	gen = stage / 'gen_init_cpio'
	run(['gcc', '-O2', '-o', str(gen),
	     str(workspace.unpack_pristine() / 'usr/gen_init_cpio.c')])
	spec = stage / 'spec'
	spec.write_text('\n'.join([
		'dir /dev 755 0 0',
		'nod /dev/console 600 0 0 c 5 1',
		'dir /proc 755 0 0', 'dir /sys 755 0 0', 'dir /tmp 1777 0 0',
		'dir /bin 755 0 0', 'dir /sbin 755 0 0', 'dir /root 700 0 0',
		'file /bin/busybox /bin/busybox 755 0 0',
		f'file /bin/tbprobe {stage / "tbprobe"} 755 0 0',
		f'file /init {GUEST / "init"} 755 0 0', '']))
	tmp = out.with_suffix('.tmp')
	with open(tmp, 'wb') as f:
		run([str(gen), str(spec)], stdout=f)
	tmp.rename(out)
	return out


def qemu_cmd(kernel, initrd, append, console, data, smp=4, cpu='qemu64', extra=()):
	return ['qemu-system-x86_64', '-M', 'q35', '-cpu', cpu, '-smp', str(smp),
		'-m', '512', '-nodefaults', '-no-reboot', '-display', 'none',
		'-kernel', str(kernel), '-initrd', str(initrd), '-append', append,
		'-chardev', f'file,id=con,path={console}', '-serial', 'chardev:con',
		'-chardev', f'file,id=data,path={data}', '-serial', 'chardev:data',
		'-device', 'isa-debug-exit,iobase=0xf4,iosize=0x04',
		'-monitor', f'unix:{Path(console).parent / "monitor.sock"},server,nowait'] + list(extra)


def monitor(sock, command):
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

	def __init__(self, t0, timeout, quiet=QUIET_LIMIT, beats=QUIET_BEATS,
		     silent=SILENT_LIMIT):
		self.t0 = t0
		self.timeout = timeout
		self.quiet, self.beats, self.silent = quiet, beats, silent
		self.progress = -1		# bytes of output besides heartbeats
		self.total = -1			# all bytes
		self.last_progress = self.last_any = t0
		self.beats_at_progress = 0
		self.nbeats = 0

	def update(self, now, console, data):
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
		if now - self.last_any > self.silent:
			return (f'quiet (no output at all, not even the heartbeat, for '
				f'{self.silent} s: hung guest or starved host)')
		if now - self.t0 > self.timeout:
			return f'timeout (not finished after {self.timeout} s)'
		return None


def _read(p):
	try:
		return p.read_text(errors='replace')
	except OSError:
		return ''


def _where(data):
	"""The guest's last step, from its last @@ line."""
	lines = [ln for ln in data.splitlines() if ln.startswith('@@') and
		 not ln.startswith('@@raw')]
	return lines[-1][:60] if lines else 'booting'


def watch(cmd, console, data, timeout, what='boot'):
	"""Run QEMU until it exits, stalls or stops making progress; return a status."""
	proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
				stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
	t0 = next_beat = time.time()
	next_beat += HEARTBEAT
	dog = Watchdog(t0, timeout)
	pressed = 0
	status = None
	try:
		while status is None:
			try:
				rc = proc.wait(timeout=0.5)
				return 'done' if rc == GUEST_DONE else f'exit {rc}'
			except subprocess.TimeoutExpired:
				pass
			now = time.time()
			con, dat = _read(console), _read(data)
			status = dog.update(now, con, dat)
			# Suspend to idle: press a key (a wakeup source) once the
			# guest has been silent for KEY_DELAY s after the entry,
			# and again every KEY_REPEAT s while it does not resume: on
			# a loaded host the silence may come before the keyboard is
			# armed as a wakeup source, and that key is lost.
			entries = con.count(SUSPEND_ENTRY)
			if (entries > con.count(SUSPEND_EXIT) and now - dog.last_any > KEY_DELAY
			    and now - pressed > KEY_REPEAT):
				pressed = now
				log(f'{what}: suspend-to-idle entry {entries}: pressing a key')
				monitor(console.parent / 'monitor.sock', 'sendkey a')
			if now >= next_beat:
				next_beat = now + HEARTBEAT
				hb = guestdata.heartbeats(con)
				log(f'{what}: {elapsed(now - t0)}, guest at "{_where(dat)}"'
				    + (f', guest uptime {hb[-1]:.0f} s' if hb else ''))
	finally:
		if proc.poll() is None:
			proc.kill()
			proc.wait()
	return status


def boot(kernel, plan, outdir, cmdline=(), cpu='qemu64', smp=4, qemu=(),
	 timeout=180, seed=1, what=None):
	"""Boot once; return (status, console text, data text, seconds)."""
	outdir.mkdir(parents=True, exist_ok=True)
	console, data = outdir / 'console.log', outdir / 'data.log'
	for p in (console, data):
		if p.exists():
			p.unlink()
	append = ' '.join(['console=ttyS0', 'panic=-1', 'kunit.enable=0',
			   f'tb.plan={",".join(plan)}', f'tb.seed={seed}'] + list(cmdline))
	cmd = qemu_cmd(kernel, initramfs(), append, console, data, smp, cpu, qemu)
	(outdir / 'qemu.cmd').write_text(' '.join(cmd) + '\n')
	what = what or f'boot {outdir.name}'
	log(f'{what}: started (timeout {timeout} s), logs in {outdir}')
	t0 = time.time()
	status = watch(cmd, console, data, timeout, what)
	secs = time.time() - t0
	log(f'{what}: {status} in {elapsed(secs)}')
	return status, _read(console), _read(data), secs
