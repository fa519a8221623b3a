// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/tick_broadcast/: what tick broadcast shows and takes
 * at run time.
 *
 * stats	the per-CPU statistics (tick-broadcast-stats.h), one line per
 *		possible CPU. Reading sums nothing and takes no lock; the
 *		counters of a CPU that is busy entering idle may be one event
 *		apart from each other. Writing anything zeroes them. Counting
 *		starts at the first open.
 * coalesce_us	the coalescing window in microseconds (see "Coalescing" in
 *		tick-broadcast-core.c). A value that is not a number is
 *		refused with -EINVAL, one above the maximum with -ERANGE, and
 *		the window stays as it was.
 */

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/math64.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#include "tick-broadcast-stats.h"
#include "tick-internal.h"

#define tick_bc_name(e, name)	\
	[e] = name,
#define tick_bc_name_end	tick_bc_name

static const char * const enter_names[TICK_BC_ENTER_NR] = {
	TICK_BC_ENTER_RESULTS
};

static const char * const exit_names[TICK_BC_EXIT_NR] = {
	TICK_BC_EXIT_ACTIONS
};

static const char * const late_names[TICK_BC_LATE_BUCKETS] = {
	"late_lt1us", "late_lt4us", "late_lt16us", "late_lt64us",
	"late_lt256us", "late_lt1ms", "late_lt4ms", "late_ge4ms",
};

static int stats_show(struct seq_file *m, void *v)
{
	unsigned int cpu, i;

	for_each_possible_cpu(cpu) {
		const struct tick_bc_stats *s = per_cpu_ptr(&tick_bc_stats, cpu);

		seq_printf(m, "cpu%u", cpu);
		for (i = 0; i < TICK_BC_ENTER_NR; i++)
			seq_printf(m, " enter_%s=%llu", enter_names[i], READ_ONCE(s->enter[i]));
		for (i = 0; i < TICK_BC_EXIT_NR; i++)
			seq_printf(m, " exit_%s=%llu", exit_names[i], READ_ONCE(s->exit[i]));
		seq_printf(m, " irqs=%llu woken=%llu", READ_ONCE(s->irqs), READ_ONCE(s->woken));
		for (i = 0; i < TICK_BC_LATE_BUCKETS; i++)
			seq_printf(m, " %s=%llu", late_names[i], READ_ONCE(s->late[i]));
		seq_printf(m, " coalesced=%llu early_ns=%llu early_max_ns=%llu",
			   READ_ONCE(s->coalesced), READ_ONCE(s->early_ns),
			   READ_ONCE(s->early_max_ns));
		seq_putc(m, '\n');
	}
	return 0;
}

static int stats_open(struct inode *inode, struct file *file)
{
	tick_bc_stats_start();
	return single_open(file, stats_show, NULL);
}

static ssize_t stats_write(struct file *file, const char __user *buf, size_t len,
			   loff_t *ppos)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(&tick_bc_stats, cpu), 0, sizeof(struct tick_bc_stats));
	return len;
}

static const struct file_operations stats_fops = {
	.open		= stats_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
	.write		= stats_write,
};

static int coalesce_get(void *data, u64 *val)
{
	*val = div_u64(tick_broadcast_coalesce(), NSEC_PER_USEC);
	return 0;
}

static int coalesce_set(void *data, u64 val)
{
	if (val > TICK_BC_WINDOW_MAX_NS / NSEC_PER_USEC)
		return -ERANGE;
	return tick_broadcast_set_coalesce(val * NSEC_PER_USEC);
}

DEFINE_DEBUGFS_ATTRIBUTE(coalesce_fops, coalesce_get, coalesce_set, "%llu\n");

static int __init tick_bc_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("tick_broadcast", NULL);

	debugfs_create_file("stats", 0644, dir, NULL, &stats_fops);
	debugfs_create_file_unsafe("coalesce_us", 0644, dir, NULL, &coalesce_fops);
	return 0;
}
late_initcall(tick_bc_debugfs_init);
