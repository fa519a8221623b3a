# SPDX-License-Identifier: GPL-2.0
"""Firmware tables that give the kernel's own cpuidle drivers their states.

The test driver (test_timerstop) needs nothing from the firmware; the
drivers real machines use take their idle states from it:

  arm64   cpuidle-psci ("psci_idle"): idle states in the device tree,
          entered through PSCI CPU_SUSPEND. psci_dtb() derives the tree
          from QEMU virt's (qemu.arm64_dtb(): arch timer not
          "always-on") and adds two states to every CPU, so that the
          governor chooses between them:

            cpu-retention  shallow, the local timer keeps running
            cpu-sleep      deep, "local-timer-stop": the kernel flags it
                           CPUIDLE_FLAG_TIMER_STOP and the broadcast
                           (the hrtimer pseudo device) takes over

          Both are retention states (StateType 0 in the suspend
          parameter): QEMU's PSCI CPU_SUSPEND is a WFI that returns, so
          a power-down state would come back through cpu_suspend()'s
          error path (-EOPNOTSUPP, counted as "rejected"). The layout
          "osi" describes the same states hierarchically (power-domains
          under /psci, a cluster domain with its own state), which the
          kernel uses only in PSCI OS-initiated mode.
          timer_stops=False keeps the timer's "always-on" (the control:
          the same states, no broadcast).

  x86_64  acpi_idle: a _CST method in every processor device of QEMU's
          DSDT (\\_SB.CPUS.Cnnn), from an SSDT compiled with iasl and
          loaded with -acpitable. acpi_ssdt():

            c2   C1 (FFixedHW: HLT) and C2 entered by an I/O port read
                 (SystemIO), latency 50 us; without ARAT the kernel flags
                 C2 CPUIDLE_FLAG_TIMER_STOP (the HPET broadcasts). QEMU
                 answers the port read at once: the CPU never sleeps in
                 C2, it enters and leaves it as fast as the idle loop
                 turns.
            ffh  C2 as FFixedHW MWAIT hint 0x10, as Intel firmware
                 writes it: under TCG CPUID leaf 5 reports no MWAIT
                 sub-states and the kernel drops the state.

What QEMU TCG (7.2) refuses, so that nobody tries it again blind:

  - a _CST C2 that sleeps: the FFixedHW MWAIT state ("ffh") is dropped
    ("[Firmware Bug]: ACPI MWAIT C-state 0x10 not supported by HW"), as
    TCG's CPUID leaf 5 has no sub-states even with -cpu qemu64,+monitor;
    and TCG's MWAIT would not sleep: a pause with several vCPUs, #GP
    with ECX != 0, which the kernel sets for C2 and deeper.
  - intel_idle: it needs an Intel vCPU with MWAIT and leaf 5's
    sub-states, returns -ENODEV from intel_idle_init() quietly
    (pr_debug), and acpi_idle registers instead (tried on a Skylake
    model, family 6 model 94, +monitor).
  - PSCI OS-initiated mode ("osi"): QEMU replaces the /psci node of any
    -dtb with its own (hw/arm/boot.c, fdt_add_psci_node()), so the power
    domains never reach the kernel ("could not find phandle") and no
    cpuidle driver registers; its PSCI also answers PSCI_FEATURES
    (CPU_SUSPEND) with 0, lacks SET_SUSPEND_MODE and refuses power-level
    bits in CPU_SUSPEND. Only a guest with its own EL3 firmware (-M
    virt,secure=on and TF-A) could try it.

Why the test driver (test_timerstop) stays beside these: in the real
drivers' states under QEMU nothing stops the local timer but the
broadcast code itself, which shuts the local device down on enter;
QEMU's arch timer and LAPIC keep counting through wfi and port reads,
so a broadcast that forgot to shut it down, or re-armed it, would hide
a lost wakeup there. The test driver masks the timer itself, so only
the broadcast can wake the CPU; acpi_idle's C2 never stays at all; and
only its halt flavour handles the wakeup interrupt inside a
timer-stopping state, as default_idle_call() does between
cond_tick_broadcast_enter() and _exit() on the AMD parts that need it
(arch_cpu_idle(): sti; hlt; 6.1's amd_e400_idle()).

boot_options(name, ...) is what a scenario or bench workload with
firmware=name adds to its qemu.Boot: BootOptions. Everything generated
is cached in $TB_CACHE/firmware/ and rebuilt when this file changes.
"""

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import qemu
import workspace
from arches import ARCHES
from progress import run

# (node name, PSCI suspend parameter, entry/exit latency and minimum
# residency in us, local-timer-stop). The deep state's residency splits
# the guest's 1-20 ms sleeps between the two states.
PSCI_STATES = (
	('cpu-retention', 0x0, 20, 40, 100, False),
	('cpu-sleep', 0x1, 100, 200, 2000, True),
)
SHALLOW, DEEP = PSCI_STATES[0][0], PSCI_STATES[1][0]
# The cluster's state of the hierarchical layout: power level 1 in the
# PSCI parameter's original format (bits 25:24).
CLUSTER_STATE = ('cluster-sleep', 0x1000011, 200, 400, 5000)
LAYOUTS = ('flat', 'osi')

# ACPI: (type, entry method, latency us, power mW) per _CST entry.
CST = {
	'c2': (('C1', 'ffh-halt', 1, 1000), ('C2', 'io', 50, 500)),
	'ffh': (('C1', 'ffh-halt', 1, 1000), ('C2', 'ffh-mwait', 50, 500)),
}
# ICH9's P_LVL2 (PMBASE 0x600 + 0x14), which QEMU's q35 leaves unassigned:
# the read returns 0xff at once.
C2_PORT = 0x614
MWAIT_C2_HINT = 0x10

CACHE = workspace.CACHE / 'firmware'


# ---------------------------------------------------------------- device tree

def node_span(dts: str, header: str) -> Tuple[int, int]:
	"""(start, end) of the node whose header line matches header (a
	regex), end just after its closing "};"."""
	m = re.search(header, dts, re.M)
	if not m:
		raise ValueError(f'no node matching {header!r}')
	depth = 0
	for i in range(dts.index('{', m.start()), len(dts)):
		if dts[i] == '{':
			depth += 1
		elif dts[i] == '}':
			depth -= 1
			if depth == 0:
				return m.start(), dts.index(';', i) + 1
	raise ValueError(f'unbalanced node {header!r}')


def _insert_before_close(dts: str, header: str, text: str) -> str:
	"""text added as the last children of the node matching header."""
	_, end = node_span(dts, header)
	close = dts.rindex('}', 0, end)
	line = dts.rindex('\n', 0, close) + 1
	return dts[:line] + text + dts[line:]


def _label(name: str) -> str:
	return name.upper().replace('-', '_')


def _state_node(name: str, param: int, entry: int, exit_: int, residency: int, timer_stop: bool,
		compatible: str, indent: int) -> str:
	t = '\t' * indent
	props = [f'compatible = "{compatible}";', f'arm,psci-suspend-param = <{param:#x}>;',
		 f'entry-latency-us = <{entry}>;', f'exit-latency-us = <{exit_}>;',
		 f'min-residency-us = <{residency}>;'] + (['local-timer-stop;'] if timer_stop else [])
	return (f'{t}{_label(name)}: {name} {{\n' +
		''.join(f'{t}\t{p}\n' for p in props) + f'{t}}};\n')


def cpu_nodes(dts: str) -> List[int]:
	"""The cpu@N node numbers of dts, in order."""
	return [int(n, 16) for n in re.findall(r'^\t\tcpu@([0-9a-f]+) \{', dts, re.M)]


def _add_cpu_props(dts: str, cpu: int, props: Sequence[str]) -> str:
	m = re.search(rf'^\t\tcpu@{cpu:x} \{{\n', dts, re.M)
	if not m:
		raise ValueError(f'no node cpu@{cpu:x}')
	return dts[:m.end()] + ''.join(f'\t\t\t{p}\n' for p in props) + dts[m.end():]


def add_idle_states(dts: str, layout: str = 'flat', always_on: bool = False) -> str:
	"""QEMU virt's device tree source with PSCI idle states for every CPU.

	layout "flat": the states in /cpus/idle-states, referenced by each
	CPU's cpu-idle-states. "osi": the hierarchical layout of the PSCI
	binding: each CPU in its own power domain (a child of /psci whose
	domain-idle-states are the CPU's states), those in a cluster domain
	with a state of its own. always_on adds the timer's "always-on".
	"""
	if layout not in LAYOUTS:
		raise ValueError(f'layout {layout!r}, want one of {LAYOUTS}')
	cpus = cpu_nodes(dts)
	if not cpus:
		raise ValueError('no cpu@N nodes under /cpus')
	states = ''.join(_state_node(*s, 'arm,idle-state', 3) for s in PSCI_STATES)
	text = f'\t\tidle-states {{\n\t\t\tentry-method = "psci";\n{states}\t\t}};\n'
	refs = ' '.join(f'&{_label(s[0])}' for s in PSCI_STATES)
	if layout == 'osi':
		name, param, entry, exit_, res = CLUSTER_STATE
		text += ('\t\tdomain-idle-states {\n' +
			 _state_node(name, param, entry, exit_, res, True, 'domain-idle-state', 3) +
			 '\t\t};\n')
	dts = _insert_before_close(dts, r'^\tcpus \{', text)
	for c in cpus:
		props = ([f'cpu-idle-states = <{refs}>;'] if layout == 'flat' else
			 [f'power-domains = <&CPU_PD{c}>;', 'power-domain-names = "psci";'])
		dts = _add_cpu_props(dts, c, props)
	if layout == 'osi':
		pds = ''.join(f'\t\tCPU_PD{c}: power-domain-cpu{c} {{\n'
			      '\t\t\t#power-domain-cells = <0>;\n'
			      f'\t\t\tpower-domains = <&CLUSTER_PD>;\n'
			      f'\t\t\tdomain-idle-states = <{refs}>;\n\t\t}};\n' for c in cpus)
		pds += ('\t\tCLUSTER_PD: power-domain-cluster {\n\t\t\t#power-domain-cells = <0>;\n'
			f'\t\t\tdomain-idle-states = <&{_label(CLUSTER_STATE[0])}>;\n\t\t}};\n')
		dts = _insert_before_close(dts, r'^\tpsci \{', pds)
	if always_on:
		dts, n = re.subn(r'(^\ttimer \{\n)', r'\1\t\talways-on;\n', dts, flags=re.M)
		if n != 1:
			raise ValueError('no timer node')
	return dts


def _fresh(path: Path) -> bool:
	return path.exists() and path.stat().st_mtime >= Path(__file__).stat().st_mtime


def psci_dtb(smp: int, layout: str = 'flat', timer_stops: bool = True,
	     cpu: str = ARCHES['arm64'].cpu, memory: str = qemu.MEMORY) -> Path:
	"""A device tree for -M virt with PSCI idle states (add_idle_states())."""
	name = re.sub(r'[^\w.-]', '_', f'virt-{cpu}-smp{smp}-m{memory}-psci-{layout}'
		      + ('' if timer_stops else '-always-on'))
	out = CACHE / f'{name}.dtb'
	if _fresh(out):
		return out
	out.parent.mkdir(parents=True, exist_ok=True)
	base = qemu.arm64_dtb(smp, cpu, memory)
	dts = subprocess.run(['dtc', '-q', '-I', 'dtb', '-O', 'dts', str(base)],
			     capture_output=True, text=True, check=True).stdout
	dts = add_idle_states(dts, layout, always_on=not timer_stops)
	out.with_suffix('.dts').write_text(dts)
	tmp = out.with_suffix('.tmp')
	run(['dtc', '-q', '-I', 'dts', '-O', 'dtb', '-o', str(tmp), str(out.with_suffix('.dts'))])
	tmp.rename(out)
	return out


# ---------------------------------------------------------------- ACPI

def _register(method: str, port: int = C2_PORT, hint: int = MWAIT_C2_HINT) -> str:
	if method == 'ffh-halt':
		# bit offset 0: not a native C-state beyond halt, the kernel uses HLT
		return 'Register (FFixedHW, 0x00, 0x00, 0x0000000000000000, )'
	if method == 'ffh-mwait':
		# Intel's FFH encoding: class 1 (MWAIT), bit offset 2, the hint,
		# access size 1 (interrupt break)
		return f'Register (FFixedHW, 0x01, 0x02, {hint:#018x}, 0x01, )'
	if method == 'io':
		return f'Register (SystemIO, 0x08, 0x00, {port:#018x}, )'
	raise ValueError(f'unknown _CST entry method {method!r}')


def ssdt_asl(smp: int, layout: str = 'c2') -> str:
	"""ASL source of an SSDT that adds _CST to \\_SB.CPUS.C000.. (smp CPUs)."""
	entries = CST[layout]
	pkgs = ',\n'.join(
		f'\t\tPackage () {{ ResourceTemplate () {{ {_register(m)} }}, '
		f'{int(t[1:])}, {lat}, {mw} }}' for t, m, lat, mw in entries)
	lines = ['DefinitionBlock ("", "SSDT", 2, "TBTEST", "TBCST", 0x00000001)', '{']
	lines += [f'\tExternal (\\_SB.CPUS.C{c:03X}, DeviceObj)' for c in range(smp)]
	lines += ['', f'\tName (\\TBCS, Package () {{ {len(entries)},', pkgs, '\t})', '']
	for c in range(smp):
		lines += [f'\tScope (\\_SB.CPUS.C{c:03X})', '\t{',
			  '\t\tMethod (_CST, 0, NotSerialized) { Return (\\TBCS) }', '\t}']
	lines.append('}')
	return '\n'.join(lines) + '\n'


def acpi_ssdt(smp: int, layout: str = 'c2') -> Path:
	"""The SSDT of ssdt_asl(), compiled by iasl (acpica-tools)."""
	out = CACHE / f'ssdt-cst-{layout}-smp{smp}.aml'
	if _fresh(out):
		return out
	out.parent.mkdir(parents=True, exist_ok=True)
	stage = CACHE / f'ssdt-cst-{layout}-smp{smp}.stage'
	shutil.rmtree(stage, ignore_errors=True)
	stage.mkdir()
	(stage / 'ssdt.asl').write_text(ssdt_asl(smp, layout))
	run(['iasl', '-p', str(stage / 'ssdt'), str(stage / 'ssdt.asl')],
	    stdout=subprocess.DEVNULL)
	(stage / 'ssdt.aml').rename(out)
	shutil.copyfile(stage / 'ssdt.asl', out.with_suffix('.asl'))
	shutil.rmtree(stage)
	return out


# ---------------------------------------------------------------- boots

# name -> (architecture, what it builds)
FIRMWARE = {
	'psci': ('arm64', 'device tree, two PSCI idle states (flat layout)'),
	'psci-osi': ('arm64', 'device tree, PSCI idle states in power domains (OS-initiated)'),
	'acpi-c2': ('x86_64', 'SSDT: _CST with C1 (HLT) and C2 (I/O port read)'),
	'acpi-ffh': ('x86_64', 'SSDT: _CST with C1 (HLT) and C2 (FFH MWAIT 0x10)'),
}


@dataclass
class BootOptions:
	"""What firmware adds to a qemu.Boot: its device tree (arm64), or
	more QEMU arguments (x86_64: the SSDT)."""
	dtb: Optional[Path] = None
	qemu: List[str] = field(default_factory=list)


def boot_options(name: str, smp: int = 4, timer_stops: bool = True,
		 cpu: Optional[str] = None) -> BootOptions:
	"""The BootOptions that boot with firmware name."""
	if name not in FIRMWARE:
		raise ValueError(f'unknown firmware {name!r} (want one of {", ".join(FIRMWARE)})')
	if FIRMWARE[name][0] == 'arm64':
		layout = 'osi' if name == 'psci-osi' else 'flat'
		return BootOptions(dtb=psci_dtb(smp, layout, timer_stops,
						cpu or ARCHES['arm64'].cpu))
	return BootOptions(qemu=['-acpitable', f'file={acpi_ssdt(smp, name.split("-", 1)[1])}'])
