// SPDX-License-Identifier: GPL-2.0
/*
 * test_timerstop: a test cpuidle driver whose deep state stops the
 * local timer, for exercising tick broadcast on virtual machines.
 *
 * Virtual CPUs keep their local timer running in every idle state, so the
 * tick broadcast code is never really needed there: a lost broadcast wakeup
 * is hidden by the local timer firing anyway. This driver gives such
 * machines a deep state that behaves like real hardware:
 *
 *  - state 0 ("C1") is a plain halt, local timer running;
 *  - state 1 ("C3") carries CPUIDLE_FLAG_TIMER_STOP and, unless the CPU
 *    has an always-running timer (x86 ARAT, an arm64 architected timer
 *    marked "always-on"), masks the local timer for the whole time it is
 *    in the state, so that only the broadcast device (by IPI) or another
 *    interrupt can wake the CPU.
 *
 * Two flavours of the deep state, chosen with the "flavour" parameter:
 *
 * irqoff (default)
 *	Like intel_idle or ACPI C3: entered with interrupts disabled and left
 *	when an interrupt becomes pending (x86: any bit in the local APIC
 *	IRR; arm64: "wfi" with interrupts masked, until ISR_EL1 shows one).
 *	The wakeup interrupt is handled only after the cpuidle core has
 *	called tick_broadcast_exit().
 *
 * halt
 *	Like default_idle_call() on the AMD parts whose C1E stops the
 *	local APIC timer: "sti; hlt" (arm64: "wfi", then interrupts
 *	unmasked once), so the wakeup interrupt is handled inside the state,
 *	between tick_broadcast_enter() and tick_broadcast_exit(). The
 *	handler may reprogram the local timer; leaving the state then must
 *	not undo that (see timerstop_timer_resume()).
 *
 * The driver is inert unless enabled on the command line, e.g.
 * "test_timerstop.enable=1 test_timerstop.flavour=halt". Another
 * cpuidle driver (acpi_idle, intel_idle, psci_idle) registered first
 * makes registration fail with -EBUSY; build the test kernel without
 * them.
 *
 * It is built in only: it reaches the timer through what the kernel does
 * not export to modules, the static calls behind apic_read() and
 * apic_write() on x86 and, on arm64, the boot CPU mode that tells which
 * architected timer the kernel ticks on (is_hyp_mode_available()).
 */

#define pr_fmt(fmt) "test_timerstop: " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpufeature.h>
#include <linux/cpuidle.h>
#include <linux/init.h>
#include <linux/instrumentation.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sched/idle.h>
#include <linux/string.h>

#ifdef CONFIG_X86
#include <asm/apic.h>
#include <asm/irqflags.h>
#endif
#ifdef CONFIG_ARM64
#include <linux/of.h>
#include <asm/barrier.h>
#include <asm/cpuidle.h>
#include <asm/proc-fns.h>
#include <asm/sysreg.h>
#include <asm/virt.h>
#include <clocksource/arm_arch_timer.h>
#endif

enum timerstop_flavour {
	TIMERSTOP_IRQOFF,
	TIMERSTOP_HALT,
};

static bool enable;
module_param(enable, bool, 0444);
MODULE_PARM_DESC(enable, "Register the driver (default: no)");

static char *flavour = "irqoff";
module_param(flavour, charp, 0444);
MODULE_PARM_DESC(flavour, "Deep state flavour: irqoff or halt (default: irqoff)");

static unsigned int residency_us = 100;
module_param(residency_us, uint, 0444);
MODULE_PARM_DESC(residency_us, "Deep state target residency in us (default: 100)");

static unsigned int latency_us = 20;
module_param(latency_us, uint, 0444);
MODULE_PARM_DESC(latency_us, "Deep state exit latency in us (default: 20)");

static enum timerstop_flavour timerstop_flavour;
static bool timerstop_stops;		/* the local timer stops in C3 */
static struct cpuidle_device __percpu *timerstop_devices;
static enum cpuhp_state timerstop_hp_state;

#ifdef CONFIG_X86
/*
 * The local APIC timer is the per-CPU tick device. Without ARAT real
 * hardware stops it in C3; here it is masked instead. The saved LVTT is
 * written back only if nobody rewrote the register meanwhile: in the halt
 * flavour the wakeup interrupt runs inside the state and may switch the
 * device back to oneshot (tick_check_oneshot_broadcast_this_cpu()) and
 * arm it. Restoring the stale value then would lose that event and stall
 * the CPU.
 */
static bool timerstop_timer_stops(void)
{
	return !boot_cpu_has(X86_FEATURE_ARAT);
}

static u32 timerstop_timer_suspend(void)
{
	u32 lvtt = apic_read(APIC_LVTT);

	apic_write(APIC_LVTT, lvtt | APIC_LVT_MASKED);
	return lvtt;
}

static void timerstop_timer_resume(u32 saved)
{
	if (apic_read(APIC_LVTT) != (saved | APIC_LVT_MASKED))
		return;
	apic_write(APIC_LVTT, saved);
	/*
	 * Halt flavour, timer left running at entry: an interrupt handled
	 * inside the state may have rearmed it, and if the count ran out
	 * before this unmask its interrupt was dropped, not left pending. On
	 * hardware the timer runs again as soon as the wakeup comes: fire it
	 * now. An expiry whose interrupt is already pending gets a second,
	 * harmless one. (Oneshot mode only; qemu64 has no TSC deadline.)
	 */
	if (!(saved & (APIC_LVT_MASKED | APIC_LVT_TIMER_PERIODIC | APIC_LVT_TIMER_TSCDEADLINE)) &&
	    apic_read(APIC_TMICT) && !apic_read(APIC_TMCCT))
		apic_write(APIC_TMICT, 1);
}

/* Any vector requested in the IRR ends the irqoff state. */
static bool timerstop_irq_pending(void)
{
	unsigned int i;

	for (i = 0; i < APIC_ISR_NR; i++) {
		if (apic_read(APIC_IRR + i * 0x10))
			return true;
	}
	return false;
}

/* hlt with interrupts disabled would never end: poll (see timerstop_deep()) */
static __cpuidle void timerstop_wait_pending(void)
{
	instrumentation_begin();
	while (!timerstop_irq_pending())
		cpu_relax();
	instrumentation_end();
}

static __cpuidle void timerstop_halt(void)
{
	raw_safe_halt();
	raw_local_irq_disable();
}
#endif /* CONFIG_X86 */

#ifdef CONFIG_ARM64
/*
 * The architected timer is the per-CPU tick device. Unless the firmware
 * marks it "always-on" it carries C3STOP, and real hardware loses it in
 * deep states; here its interrupt is masked (CTL.IMASK) instead. The
 * kernel runs on the virtual timer at EL1 without EL2 (a guest) and on a
 * physical one otherwise (the EL2 one with VHE, which the CNTP registers
 * then name). As on x86, the saved control value is written back only
 * if nobody reprogrammed the timer meanwhile; the comparator condition
 * is level-triggered, so an expiry passed while masked fires at once.
 */
static bool timerstop_use_virt;

static bool timerstop_timer_stops(void)
{
	struct device_node *np = of_find_compatible_node(NULL, NULL, "arm,armv8-timer");
	bool stops = np && !of_property_read_bool(np, "always-on");

	of_node_put(np);
	timerstop_use_virt = !is_kernel_in_hyp_mode() && !is_hyp_mode_available();
	return stops;
}

static u32 timerstop_ctl_read(void)
{
	return timerstop_use_virt ? read_sysreg(cntv_ctl_el0) : read_sysreg(cntp_ctl_el0);
}

static void timerstop_ctl_write(u32 ctl)
{
	if (timerstop_use_virt)
		write_sysreg(ctl, cntv_ctl_el0);
	else
		write_sysreg(ctl, cntp_ctl_el0);
	isb();
}

static u32 timerstop_timer_suspend(void)
{
	u32 ctl = timerstop_ctl_read() & ~ARCH_TIMER_CTRL_IT_STAT;

	timerstop_ctl_write(ctl | ARCH_TIMER_CTRL_IT_MASK);
	return ctl;
}

static void timerstop_timer_resume(u32 saved)
{
	u32 ctl = timerstop_ctl_read() & ~ARCH_TIMER_CTRL_IT_STAT;

	if (ctl == (saved | ARCH_TIMER_CTRL_IT_MASK))
		timerstop_ctl_write(saved);
}

/* An IRQ or FIQ signalled to this CPU ends the irqoff state. */
static __cpuidle void timerstop_wait_pending(void)
{
	while (!(read_sysreg(isr_el1) & (ISR_EL1_I | ISR_EL1_F)))
		cpu_do_idle();
}

static __cpuidle void timerstop_halt(void)
{
	cpu_do_idle();
	raw_local_irq_enable();
	raw_local_irq_disable();
}
#endif /* CONFIG_ARM64 */

/*
 * The states' ->enter() and all they call run with RCU not watching
 * (cpuidle_enter_state()): __cpuidle, out of the tracer's reach.
 */
static __cpuidle int timerstop_enter_shallow(struct cpuidle_device *dev,
					     struct cpuidle_driver *drv, int index)
{
	if (current_clr_polling_and_test())
		return index;

	timerstop_halt();
	return index;
}

/* The deep state proper: the local timer is stopped for its duration. */
static __cpuidle void timerstop_deep(bool irqoff)
{
	bool stop = timerstop_stops;
	u32 saved = 0;

	/*
	 * The timer's accessors may be instrumented (x86: the static calls
	 * behind apic_read()): annotated, as cpuidle_enter_state() annotates
	 * its call of the state's ->enter().
	 */
	if (stop) {
		instrumentation_begin();
		saved = timerstop_timer_suspend();
		instrumentation_end();
	}

	if (irqoff)
		timerstop_wait_pending();
	else
		timerstop_halt();

	if (stop) {
		instrumentation_begin();
		timerstop_timer_resume(saved);
		instrumentation_end();
	}
}

static __cpuidle int timerstop_enter_deep(struct cpuidle_device *dev,
					  struct cpuidle_driver *drv, int index)
{
	/*
	 * A remote wakeup of a polling idle task only sets NEED_RESCHED and
	 * sends no IPI; neither flavour would notice that.
	 */
	if (current_clr_polling_and_test())
		return index;

	timerstop_deep(timerstop_flavour == TIMERSTOP_IRQOFF);
	return index;
}

/*
 * Suspend to idle: the tick is frozen around this (tick_freeze()), and
 * the last CPU in suspends timekeeping and the broadcast device. Always
 * the irqoff flavour, as intel_idle's s2idle states: an interrupt handled
 * in here would find timekeeping suspended.
 */
static __cpuidle int timerstop_enter_s2idle(struct cpuidle_device *dev,
					    struct cpuidle_driver *drv, int index)
{
	timerstop_deep(true);
	return 0;
}

static struct cpuidle_driver timerstop_driver = {
	.name = "timerstop",
	.states = {
		{
			.enter			= timerstop_enter_shallow,
			.exit_latency		= 1,
			.target_residency	= 1,
			.name			= "C1",
			.desc			= "halt, local timer running",
		},
		{
			.enter			= timerstop_enter_deep,
			.enter_s2idle		= timerstop_enter_s2idle,
			.flags			= CPUIDLE_FLAG_TIMER_STOP,
			.name			= "C3",
			.desc			= "local timer stopped",
		},
	},
	.state_count = 2,
	.safe_state_index = 0,
};

static int timerstop_cpu_online(unsigned int cpu)
{
	struct cpuidle_device *dev = per_cpu_ptr(timerstop_devices, cpu);
	int ret;

	if (dev->registered)
		return 0;

	dev->cpu = cpu;
	ret = cpuidle_register_device(dev);
	if (ret)
		pr_err("CPU%u: cpuidle_register_device() failed: %d\n", cpu, ret);
	return ret;
}

static int timerstop_cpu_offline(unsigned int cpu)
{
	struct cpuidle_device *dev = per_cpu_ptr(timerstop_devices, cpu);

	if (dev->registered)
		cpuidle_unregister_device(dev);
	return 0;
}

static int __init timerstop_parse_flavour(void)
{
	if (sysfs_streq(flavour, "irqoff"))
		timerstop_flavour = TIMERSTOP_IRQOFF;
	else if (sysfs_streq(flavour, "halt"))
		timerstop_flavour = TIMERSTOP_HALT;
	else
		return -EINVAL;
	return 0;
}

static void timerstop_cleanup(void)
{
	if (timerstop_hp_state)
		cpuhp_remove_state(timerstop_hp_state);
	timerstop_hp_state = 0;
	cpuidle_unregister_driver(&timerstop_driver);
	free_percpu(timerstop_devices);
	timerstop_devices = NULL;
}

static int __init timerstop_init(void)
{
	struct cpuidle_state *deep = &timerstop_driver.states[1];
	int ret;

	if (!enable)
		return -ENODEV;

	if (timerstop_parse_flavour()) {
		pr_err("unknown flavour \"%s\" (want irqoff or halt)\n", flavour);
		return -EINVAL;
	}

	timerstop_stops = timerstop_timer_stops();
	deep->target_residency = residency_us;
	deep->exit_latency = latency_us;

	ret = cpuidle_register_driver(&timerstop_driver);
	if (ret) {
		pr_err("cannot register the driver: %d%s\n", ret,
		       ret == -EBUSY ? " (another cpuidle driver is registered)" : "");
		return ret;
	}

	timerstop_devices = alloc_percpu(struct cpuidle_device);
	if (!timerstop_devices) {
		cpuidle_unregister_driver(&timerstop_driver);
		return -ENOMEM;
	}

	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "cpuidle/timerstop:online",
				timerstop_cpu_online, timerstop_cpu_offline);
	if (ret < 0) {
		timerstop_cleanup();
		return ret;
	}
	timerstop_hp_state = ret;

	pr_info("registered, flavour %s, local timer %s in C3, residency %u us, latency %u us\n",
		flavour, timerstop_stops ? "stops" : "keeps running",
		residency_us, latency_us);
	return 0;
}
device_initcall(timerstop_init);
