# SPDX-License-Identifier: GPL-2.0
"""The architectures the testbed builds and boots, and what differs
between them, in one table: ARCHES, {name: Arch}.

Bottom layer: imports nothing of the testbed. The builds (workspace.py,
configbuilds.py), the boots (qemu.py, firmware.py), kunit.py's command
lines (kunitcmd.py) and make bench read their per-architecture facts
here.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Tuple

DEFAULT = 'x86_64'	# the default architecture of builds and boots


@dataclass(frozen=True)
class Arch:
	"""What the testbed needs to know of one architecture.

	name		the kernel's ARCH= and kunit.py's --arch
	image		the kernel image, relative to the build directory
	cross		the cross compiler's prefix ('': the host's gcc)
	qemu		QEMU's system emulator for it
	machine		QEMU's -M
	cpu		QEMU's -cpu for the scenarios (x86_64 without ARAT: the
			LAPIC timer stops in deep idle and the HPET or PIT
			broadcasts)
	console		the kernel's console device
	guest_done	QEMU's exit status once the guest's init finished
	busybox		the host's static busybox if it is of this
			architecture, else None (Debian's package of the
			architecture, workspace.foreign_busybox())
	ipi_func	the kernel function that sends the wake IPIs (bench's
			function profiler)
	kunit_args	kunit.py's kernel arguments for the KUnit boots
	"""
	name: str
	image: str
	cross: str
	qemu: str
	machine: str
	cpu: str
	console: str
	guest_done: int
	busybox: Optional[Path]
	ipi_func: str
	kunit_args: Tuple[str, ...]


# QEMU's exit status once the guest's init finished: x86_64 writes 0x31
# to isa-debug-exit (0x31 * 2 + 1); arm64 powers off (and so would a
# panic with panic=-1 and -no-reboot: "finished" also wants "@@end").
#
# The KUnit boots' kernel arguments: under TCG the clocksource watchdog
# may find the TSC skewed against the HPET in the middle of a case and
# switch clocksources by stop_machine(), which stalls the devices suite's
# lock-step cases until their 15 s timeouts. The KUnit boots never use
# the TSC. A panic reboots at once (QEMU runs with -no-reboot, so it
# exits) instead of leaving the run to the timeout. The PS/2 keyboard and
# mouse are probed asynchronously and announce themselves on the console
# whenever the probe ends, which can be between two lines of a
# parameterised case's KTAP header: kunit.py then loses count of the
# cases and reports the rest of the suite as crashed. The KUnit boots
# leave both ports alone.
ARCHES: Dict[str, Arch] = {
	'x86_64': Arch(
		name='x86_64', image='arch/x86/boot/bzImage', cross='',
		qemu='qemu-system-x86_64', machine='q35', cpu='qemu64', console='ttyS0',
		guest_done=99, busybox=Path('/bin/busybox'), ipi_func='lapic_timer_broadcast',
		kunit_args=('--kernel_args', 'tsc=unstable', '--kernel_args', 'panic=1',
			    '--kernel_args', 'i8042.nokbd', '--kernel_args', 'i8042.noaux')),
	'arm64': Arch(
		name='arm64', image='arch/arm64/boot/Image', cross='aarch64-linux-gnu-',
		qemu='qemu-system-aarch64', machine='virt', cpu='cortex-a57', console='ttyAMA0',
		guest_done=0, busybox=None, ipi_func='tick_broadcast',
		kunit_args=('--kernel_args', 'panic=1')),
}
