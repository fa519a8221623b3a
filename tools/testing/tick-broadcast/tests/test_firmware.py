# SPDX-License-Identifier: GPL-2.0
"""firmware: the device trees and the SSDT that give cpuidle-psci and
acpi_idle their states, over QEMU virt's recorded device tree."""

import re
import shutil
import subprocess
import unittest

import firmware
import scenarios
from tests import fixtures

VIRT = (fixtures.FIXTURES / 'virt-cortex-a57-smp4.dts').read_text()


def node(dts, header):
	a, b = firmware.node_span(dts, header)
	return dts[a:b]


class DeviceTree(unittest.TestCase):
	def test_flat_layout_gives_every_cpu_both_states(self):
		dts = firmware.add_idle_states(VIRT)
		states = node(dts, r'^\t\tidle-states \{')
		self.assertIn('entry-method = "psci";', states)
		shallow = node(states, r'cpu-retention \{')
		deep = node(states, r'cpu-sleep \{')
		self.assertNotIn('local-timer-stop', shallow)
		self.assertIn('local-timer-stop;', deep)
		self.assertIn('arm,psci-suspend-param = <0x1>;', deep)
		for c in range(4):
			self.assertIn('cpu-idle-states = <&CPU_RETENTION &CPU_SLEEP>;',
				      node(dts, rf'^\t\tcpu@{c} \{{'))
		# the rest of the tree untouched, the timer still stops
		self.assertNotIn('always-on', node(dts, r'^\ttimer \{'))
		self.assertEqual(len(dts.splitlines()), len(VIRT.splitlines()) + 22)

	def test_retention_states_only(self):
		# QEMU's CPU_SUSPEND is a WFI that returns: a power-down state
		# (StateType bit 16) would come back as an error
		for st in firmware.PSCI_STATES:
			self.assertFalse(st[1] & 0x10000, st)

	def test_osi_layout_puts_cpus_in_power_domains(self):
		dts = firmware.add_idle_states(VIRT, 'osi')
		psci = node(dts, r'^\tpsci \{')
		for c in range(4):
			cpu = node(dts, rf'^\t\tcpu@{c} \{{')
			self.assertIn(f'power-domains = <&CPU_PD{c}>;', cpu)
			self.assertNotIn('cpu-idle-states', cpu)
			pd = node(psci, rf'power-domain-cpu{c} \{{')
			self.assertIn('power-domains = <&CLUSTER_PD>;', pd)
			self.assertIn('#power-domain-cells = <0>;', pd)
		cluster = node(psci, r'power-domain-cluster \{')
		self.assertIn('domain-idle-states = <&CLUSTER_SLEEP>;', cluster)
		self.assertIn('compatible = "domain-idle-state";',
			      node(dts, r'^\t\tdomain-idle-states \{'))

	def test_control_keeps_always_on(self):
		dts = firmware.add_idle_states(VIRT, always_on=True)
		self.assertIn('always-on;', node(dts, r'^\ttimer \{'))

	def test_refuses_a_tree_without_cpus(self):
		with self.assertRaises(ValueError):
			firmware.add_idle_states(re.sub(r'cpu@', 'core@', VIRT))
		with self.assertRaises(ValueError):
			firmware.add_idle_states(VIRT, 'cluster')

	@unittest.skipUnless(shutil.which('dtc'), 'no dtc')
	def test_dtc_compiles_both_layouts(self):
		for layout in firmware.LAYOUTS:
			r = subprocess.run(['dtc', '-q', '-I', 'dts', '-O', 'dtb', '-o', '/dev/null'],
					   input=firmware.add_idle_states(VIRT, layout), text=True,
					   capture_output=True)
			self.assertEqual(r.returncode, 0, r.stderr)


class Ssdt(unittest.TestCase):
	def test_every_cpu_gets_the_cst(self):
		asl = firmware.ssdt_asl(4)
		for c in range(4):
			self.assertIn(f'Scope (\\_SB.CPUS.C00{c})', asl)
		self.assertNotIn('C004', asl)
		self.assertEqual(asl.count('Method (_CST'), 4)
		self.assertIn('Register (SystemIO, 0x08, 0x00, 0x0000000000000614, ) }, 2, 50,', asl)
		self.assertIn('Name (\\TBCS, Package () { 2,', asl)

	def test_ffh_c2_is_an_mwait_hint(self):
		asl = firmware.ssdt_asl(2, 'ffh')
		self.assertIn('Register (FFixedHW, 0x01, 0x02, 0x0000000000000010, 0x01, ) }, 2,',
			      asl)

	@unittest.skipUnless(shutil.which('iasl'), 'no iasl')
	def test_iasl_compiles_it(self):
		import tempfile
		from pathlib import Path
		with tempfile.TemporaryDirectory() as d:
			for layout in firmware.CST:
				f = Path(d) / f'{layout}.asl'
				f.write_text(firmware.ssdt_asl(4, layout))
				r = subprocess.run(['iasl', '-p', str(f.with_suffix('')), str(f)],
						   capture_output=True, text=True)
				self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


class Scenarios(unittest.TestCase):
	def test_scenarios_name_the_firmware_states(self):
		for name, sc in scenarios.SCENARIOS.items():
			if sc.firmware.startswith('psci'):
				self.assertEqual((sc.shallow_state, sc.deep_state),
						 (firmware.SHALLOW, firmware.DEEP), name)
			if sc.firmware:
				self.assertIn(sc.firmware, firmware.FIRMWARE)
				self.assertEqual(firmware.FIRMWARE[sc.firmware][0], sc.arch)
				self.assertNotIn('test_timerstop.enable=1', sc.cmdline)
				self.assertIn('deep:off:2', sc.plan)


if __name__ == '__main__':
	unittest.main()
