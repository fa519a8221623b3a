# SPDX-License-Identifier: GPL-2.0
"""Boot a scenario on a built kernel and judge it: one test row.

Glue between qemu.py (the boot), scenarios.py (what to boot and the
verdicts) and the commands (tb.py scenario, report, check). A boot that
failed only in ways host starvation explains (scenarios.retryable) is
booted once more; the row then says so.
"""

import os
import shutil
from pathlib import Path
from typing import List, Optional, Tuple

import firmware
import qemu
import scenarios
import workspace
from guestdata import Metrics
from progress import log
from results import Check, Row, Status, expect_failure
from scenarios import Scenario


def boot_scenario(kernel: Path, sc: Scenario, out: Path, seed: int = 1,
		  what: Optional[str] = None) -> qemu.Booted:
	"""Boot scenario sc once; return a qemu.Booted."""
	shutil.rmtree(out, ignore_errors=True)
	fw = (firmware.boot_options(sc.firmware, sc.smp) if sc.firmware
	      else firmware.BootOptions())
	b = qemu.Boot(kernel=kernel, plan=sc.plan, outdir=out, cmdline=sc.cmdline, cpu=sc.cpu,
		      smp=sc.smp, qemu=list(sc.qemu) + fw.qemu, timeout=sc.timeout, seed=seed,
		      what=what, arch=sc.arch, dtb=fw.dtb)
	return qemu.boot(b)


def judge(tree: str, sc: Scenario, out: Path, boot: qemu.Booted,
	  timing: bool) -> Tuple[List[Check], Metrics, float]:
	"""(checks, metrics, seconds) of a boot of sc; its report.txt goes to out."""
	checks, m = scenarios.verdict(sc, boot.status, boot.console, boot.data, timing, tree)
	(out / 'report.txt').write_text(
		scenarios.report(tree, sc, boot.status, boot.console, boot.data, boot.secs,
				 timing) + '\n')
	return checks, m, boot.secs


def run(name: str, tree: str, outroot: Path, seed: int = 1, variant: str = '',
	retry: bool = True) -> Row[Metrics]:
	"""Boot scenario name on tree's (already built) kernel; return its row
	(with the output directory and the metrics)."""
	sc = scenarios.SCENARIOS[name]
	# the scenario's own kernel variant (acpi, psci: the kernel's own
	# cpuidle drivers), or the one asked for (debug)
	kernel = workspace.kernel_image(tree, variant or sc.variant, sc.arch)
	label = f'{name}-{variant}' if variant else name
	return run_kernel(kernel, name, tree, f'scenario/{label}/{tree}', outroot / f'{label}-{tree}',
			  seed, timing=not variant, retry=retry)


def run_kernel(kernel: Path, name: str, tree: str, row: str, out: Path, seed: int = 1,
	       timing: bool = True, retry: bool = True) -> Row[Metrics]:
	"""Boot scenario name on kernel, a kernel of tree or built like it (a
	step of the series: seriessteps.py), into out; judge it as tree's
	(timing=False: no lateness bounds); return the row named row (with
	out and the metrics). A known failure of the base (the scenario's
	base_known) is expected (results.expect_failure()) and not retried."""
	sc = scenarios.SCENARIOS[name]
	boot = boot_scenario(kernel, sc, out, seed, what=row)
	checks, m, secs = judge(tree, sc, out, boot, timing)
	note = ''
	known = sc.base_known if tree == 'base' else ''
	if retry and not known and scenarios.retryable(checks, boot.status):
		first = '; '.join(f'{c.name}: {c.detail}' for c in checks if not c.ok)
		load = os.getloadavg()[0]
		log(f'{row}: failed on timing only (host load {load:.1f} on '
		    f'{os.cpu_count()} CPUs), booting it once more; first try: {first}')
		keep = out.with_name(out.name + '.try1')
		shutil.rmtree(keep, ignore_errors=True)
		out.rename(keep)
		boot = boot_scenario(kernel, sc, out, seed, what=f'{row} (retry)')
		checks, m, secs = judge(tree, sc, out, boot, timing)
		note = (f' (second try; the first, in {keep}, failed on timing only at host '
			f'load {load:.1f}: {first})')
	bad = [f'{c.name}: {c.detail}' for c in checks if not c.ok]
	detail = '; '.join(bad) if bad else f'{secs:.0f} s'
	return expect_failure(Row(row, Status.of(not bad), detail + note, out, m), known)
