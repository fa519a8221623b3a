// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of tick broadcast with fake clock event devices.
 *
 * Included at the end of kernel/time/tick-broadcast.c, so that a case can
 * take the broadcast over from the machine (takeover()) and give it back
 * afterwards: those two functions are the only ones that know how the
 * broadcast code keeps its state. Everything else goes through the
 * interfaces the rest of the kernel uses: fake broadcast devices are
 * registered with clockevents_register_device() and fire when the case
 * runs their event handler; the CPUs enter and leave deep idle, ask for
 * broadcast, switch to oneshot mode, go offline, suspend and resume
 * through tick_broadcast_enter(), tick_broadcast_control() and the
 * functions of tick-internal.h.
 *
 * Three CPUs besides the one running the case are players: each runs a
 * kthread that, for every step of the case (hold()), disables interrupts,
 * puts a fake tick device in place of its own, and does what the case
 * asks of it, on itself, until the step is over (release()). Their real
 * tick devices are left alone meanwhile; an interrupt of theirs waits
 * until the step is over. Between steps the CPUs are the machine's, so
 * that whoever needs them (stop_machine(), a function call IPI) gets them.
 *
 * The fakes record every programming, state change and wake IPI. After
 * every step a case checks that every player's next event will be
 * delivered in time: by its own tick device, by a wake IPI it got, or by
 * the broadcast device, armed no later than the event (or, for an event
 * that has passed, no later than now).
 *
 * A CPU entering deep idle while a case runs would sleep on the fake
 * devices: for test kernels only (not enabled by KUNIT_ALL_TESTS). Cases
 * are skipped while anything relies on the machine's broadcast.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/irq.h>
#include <linux/kthread.h>

#define NR_PLAYERS	3
#define NR_FAKE_BC	2
#define NR_EVENTS	64
#define PLAYER_HOLD_MS	15000

/* ------------------------------------------------ the machine's broadcast */

/**
 * struct bc_machine - the machine's broadcast, set aside while a case runs
 * @state:	its state, its device and mode included
 * @handler:	its device's event handler
 */
struct bc_machine {
	struct tick_bc		state;
	void			(*handler)(struct clock_event_device *dev);
};

/*
 * The state a case runs on: allocated at the first case and kept, since
 * the lockless reader (tick_check_broadcast_expired() of the force mask)
 * may still read the masks of a state just handed back. It reads the
 * masks' pointers without the lock too, so a state is built aside and
 * copied in, never initialised in place: tick_bc_init() may clear the
 * whole instance before it sets the pointers.
 */
static ktime_t *dtest_wakeup;
static unsigned long *dtest_masks;

static int dtest_state_alloc(void)
{
	if (!dtest_wakeup)
		dtest_wakeup = kcalloc(nr_cpu_ids, sizeof(*dtest_wakeup), GFP_KERNEL);
	if (!dtest_masks)
		dtest_masks = kcalloc(TICK_BC_NR_MASKS, cpumask_size(), GFP_KERNEL);
	return dtest_wakeup && dtest_masks ? 0 : -ENOMEM;
}

/*
 * Put the machine's broadcast aside, its device shut down and deaf, and
 * start over in periodic mode without a device. Return: -EBUSY if
 * anything relies on the machine's broadcast.
 */
static int takeover(struct bc_machine *m)
{
	struct clock_event_device *dev;
	struct tick_bc fresh;

	if (dtest_state_alloc())
		return -ENOMEM;
	raw_spin_lock_irq(&tick_broadcast_lock);
	if (tick_bc_busy(&tick_bc) || tick_bc.forced ||
	    !bitmap_empty(tick_bc.on, tick_bc.nr_cpus) || !tick_bc_periodic_empty(&tick_bc)) {
		raw_spin_unlock_irq(&tick_broadcast_lock);
		return -EBUSY;
	}
	dev = bc_dev();
	if (dev) {
		bc_shutdown(dev);
		m->handler = dev->event_handler;
		dev->event_handler = clockevents_handle_noop;
	}
	m->state = tick_bc;
	tick_bc_init(&fresh, &tick_bc_ops, nr_cpu_ids, cpumask_size() / sizeof(long),
		     dtest_wakeup, dtest_masks, cpumask_bits(cpu_online_mask));
	tick_bc = fresh;
	raw_spin_unlock_irq(&tick_broadcast_lock);
	return 0;
}

/*
 * Detach the case's device, so that the case can unregister it, and bring
 * the machine's broadcast back. Its device stays shut down until
 * something needs it.
 */
static void giveback(struct bc_machine *m)
{
	struct clock_event_device *dev;

	raw_spin_lock_irq(&tick_broadcast_lock);
	dev = bc_dev();
	if (dev) {
		bc_dev_sync();
		clockevents_switch_state(dev, CLOCK_EVT_STATE_DETACHED);
		dev->event_handler = clockevents_handle_noop;
	}
	tick_bc = m->state;
	dev = bc_dev();
	if (dev)
		dev->event_handler = m->handler;
	raw_spin_unlock_irq(&tick_broadcast_lock);
}

/* ------------------------------------------------------------ fake devices */

enum fake_event_type { EV_STATE, EV_PROGRAM, EV_IPI, EV_TICK, EV_RESUME };

struct fake_event {
	enum fake_event_type	type;
	ktime_t			t;	/* EV_PROGRAM: the expiry */
	int			state;	/* EV_STATE: the new state */
};

/*
 * A fake clock event device: a broadcast device or a player's tick device.
 * @armed is when it would fire: what it was programmed for last, KTIME_MAX
 * once shut down, switched or fired. Programming takes @slow_us. With
 * CLOCK_EVT_FEAT_HRTIMER it stands for the hrtimer broadcast: programming
 * binds it to the CPU doing it, as hrtimer_start() does. @hook, if set, is
 * called (and cleared) after the device's next programming, in the
 * caller's context; @watch counts in @unready the programmings made while
 * the device's handler is not the oneshot broadcast one.
 */
struct fake_dev {
	struct clock_event_device	ced;
	unsigned int			slow_us;
	ktime_t				armed;
	void				(*hook)(struct fake_dev *f);
	bool				watch;
	unsigned int			unready;
	unsigned int			nr;
	struct fake_event		ev[NR_EVENTS];
};

static struct fake_dev *to_fake(struct clock_event_device *ced)
{
	return container_of(ced, struct fake_dev, ced);
}

static void record(struct fake_dev *f, enum fake_event_type type, ktime_t t, int state)
{
	if (f->nr < NR_EVENTS)
		f->ev[f->nr] = (struct fake_event) { type, t, state };
	f->nr++;
}

static unsigned int count(struct fake_dev *f, enum fake_event_type type)
{
	unsigned int i, n = 0;

	for (i = 0; i < min(f->nr, NR_EVENTS); i++)
		n += f->ev[i].type == type;
	return n;
}

static void fake_hook(struct fake_dev *f)
{
	void (*hook)(struct fake_dev *f) = f->hook;

	if (hook) {
		f->hook = NULL;
		hook(f);
	}
}

static int fake_set_next_ktime(ktime_t expires, struct clock_event_device *ced)
{
	struct fake_dev *f = to_fake(ced);

	udelay(f->slow_us);
	f->armed = expires;
	if (ced->features & CLOCK_EVT_FEAT_HRTIMER)
		WRITE_ONCE(ced->bound_on, smp_processor_id());
	record(f, EV_PROGRAM, expires, 0);
	if (f->watch && ced->event_handler != tick_handle_oneshot_broadcast)
		f->unready++;
	fake_hook(f);
	return 0;
}

static int fake_state(struct clock_event_device *ced, enum clock_event_state state)
{
	struct fake_dev *f = to_fake(ced);

	f->armed = KTIME_MAX;
	record(f, EV_STATE, 0, state);
	return 0;
}

static int fake_shutdown(struct clock_event_device *ced)
{
	return fake_state(ced, CLOCK_EVT_STATE_SHUTDOWN);
}

static int fake_oneshot(struct clock_event_device *ced)
{
	return fake_state(ced, CLOCK_EVT_STATE_ONESHOT);
}

/* It ticks on its own: due within a period. */
static int fake_periodic(struct clock_event_device *ced)
{
	fake_state(ced, CLOCK_EVT_STATE_PERIODIC);
	to_fake(ced)->armed = ktime_add_ns(ktime_get(), TICK_NSEC);
	return 0;
}

static int fake_oneshot_stopped(struct clock_event_device *ced)
{
	return fake_state(ced, CLOCK_EVT_STATE_ONESHOT_STOPPED);
}

static int fake_tick_resume(struct clock_event_device *ced)
{
	record(to_fake(ced), EV_RESUME, 0, 0);
	return 0;
}

/*
 * A player's own tick handler, run by a broadcast interrupt on its CPU:
 * its event is handled and, for the case, it has no next one.
 */
static void fake_local_tick(struct clock_event_device *ced)
{
	ced->next_event = KTIME_MAX;
	record(to_fake(ced), EV_TICK, 0, 0);
}

/* The case running: the wake IPI callback has no device to find it by. */
static struct dtest *dtest_now;

static void fake_ipi(const struct cpumask *mask);

/*
 * A fresh device, as a driver registers it: also when a case registers it
 * again, not with the handler the broadcast code gave it before.
 */
static void fake_init(struct fake_dev *f, const char *name, unsigned int features,
		      int rating, const struct cpumask *mask)
{
	struct clock_event_device *ced = &f->ced;

	memset(f, 0, sizeof(*f));
	f->armed = KTIME_MAX;
	ced->name = name;
	ced->features = features | CLOCK_EVT_FEAT_ONESHOT | CLOCK_EVT_FEAT_KTIME;
	ced->rating = rating;
	ced->cpumask = mask;
	ced->irq = -1;
	ced->bound_on = -1;
	ced->mult = 1;
	ced->min_delta_ns = 1;
	ced->min_delta_ticks = 1;
	ced->max_delta_ns = KTIME_MAX;
	ced->max_delta_ticks = ULONG_MAX;
	ced->set_next_ktime = fake_set_next_ktime;
	ced->set_state_shutdown = fake_shutdown;
	ced->set_state_oneshot = fake_oneshot;
	ced->set_state_periodic = fake_periodic;
	ced->set_state_oneshot_stopped = fake_oneshot_stopped;
	ced->tick_resume = fake_tick_resume;
}

/* ------------------------------------------------------------ players */

enum play_op {
	PLAY_NONE,
	PLAY_HOLD,	/* fake tick device in, interrupts off, until PLAY_RELEASE */
	PLAY_RELEASE,
	PLAY_ENTER,	/* tick_broadcast_enter() with the next event @arg */
	PLAY_EXIT,	/* tick_broadcast_exit() */
	PLAY_CONTROL,	/* tick_broadcast_control(@arg) */
	PLAY_EXPIRED,	/* tick_check_broadcast_expired() */
	PLAY_IRQ,	/* the broadcast device's interrupt, on this CPU */
	PLAY_LATE_IRQ,	/* the case's late interrupt (dtest.late), on this CPU */
	PLAY_REGISTER,	/* clockevents_register_device(@arg), on this CPU */
	PLAY_QUIT,
};

/**
 * struct player - a CPU that does what the case asks
 * @cpu:	the CPU
 * @local:	its fake tick device
 * @op:		what to do next, PLAY_NONE once done (written by both sides)
 * @arg:	its argument
 * @ret:	what it returned
 * @gave_up:	it was held for longer than PLAYER_HOLD_MS and let go
 * @holding:	its fake tick device is in place, interrupts are disabled
 * @t:		the case
 * @quit:	completed when the player has ended
 * @on:		it asked for broadcast (ON or FORCE) and did not turn it off
 * @since:	delivered() when it last came to rely on the broadcast
 */
struct player {
	unsigned int		cpu;
	struct fake_dev		local;
	int			op;
	long			arg;
	int			ret;
	bool			gave_up;
	bool			holding;
	struct dtest		*t;
	struct completion	quit;
	bool			on;
	unsigned int		since;
};

/**
 * struct dtest - a case
 * @test:	its KUnit test
 * @machine:	the machine's broadcast, set aside while the case runs
 * @taken:	the case holds the broadcast (takeover() succeeded)
 * @p:		the players, one per CPU that the case drives
 * @nr_players:	how many of @p are in use
 * @held:	hold() nesting: while positive, the case is in a step
 * @in_step:	the case is in a step, on a CPU that does not preempt it:
 *		every player must have its fake tick device in place
 * @bc:		the fake broadcast devices the case registered
 * @nr_bc:	how many of @bc are registered
 * @self:	the CPU the case runs on, which plays no part
 * @irq:	the interrupt descriptor of the fake devices, or -1
 * @forced:	TICK_BROADCAST_FORCE was asked for: OFF is ignored
 * @warned:	the kernel was tainted by a warning before the case
 * @lost:	a player stopped answering
 * @t0:		when the case took the broadcast, for the event log
 * @late:	the device of a late interrupt that a player runs (PLAY_LATE_IRQ)
 * @late_handler: its handler, as the interrupt read it
 * @bc_hook:	the hook of the next broadcast device registered (fake_dev.hook)
 * @spin_enter:	the next event of the enter that enter_spins() starts
 * @spun:	the player the hook started waited for the lock while the hook ran
 */
struct dtest {
	struct kunit		*test;
	struct bc_machine	machine;
	bool			taken;
	struct player		p[NR_PLAYERS];
	unsigned int		nr_players;
	unsigned int		held;
	bool			in_step;
	struct fake_dev		bc[NR_FAKE_BC];
	unsigned int		nr_bc;
	unsigned int		self;
	int			irq;
	bool			forced;
	bool			warned;
	bool			lost;
	ktime_t			t0;
	struct fake_dev		*late;
	void			(*late_handler)(struct clock_event_device *ced);
	void			(*bc_hook)(struct fake_dev *f);
	ktime_t			spin_enter;
	bool			spun;
};

static void fake_ipi(const struct cpumask *mask)
{
	struct dtest *t = dtest_now;
	unsigned int i;

	for (i = 0; i < t->nr_players; i++)
		if (cpumask_test_cpu(t->p[i].cpu, mask))
			record(&t->p[i].local, EV_IPI, 0, 0);
}

static unsigned int ipis(struct player *p)
{
	return count(&p->local, EV_IPI);
}

/* Its events delivered by the broadcast: wake IPIs, or its handler run there. */
static unsigned int delivered(struct player *p)
{
	return ipis(p) + count(&p->local, EV_TICK);
}

static int play_one(struct player *p, int op, long arg)
{
	struct clock_event_device *bc;

	switch (op) {
	case PLAY_ENTER:
		/* As the tick code left it: programmed for its next event. */
		p->local.ced.next_event = arg;
		p->local.armed = arg;
		return tick_broadcast_enter();
	case PLAY_EXIT:
		tick_broadcast_exit();
		return 0;
	case PLAY_CONTROL:
		tick_broadcast_control(arg);
		return 0;
	case PLAY_EXPIRED:
		return tick_check_broadcast_expired();
	case PLAY_IRQ:
		bc = tick_get_broadcast_device()->evtdev;
		bc->event_handler(bc);
		return 0;
	case PLAY_LATE_IRQ:
		p->t->late_handler(&p->t->late->ced);
		return 0;
	case PLAY_REGISTER:
		clockevents_register_device((struct clock_event_device *)arg);
		return 0;
	}
	return -EINVAL;
}

static void player_swap_in(struct player *p, struct tick_device *saved)
{
	struct tick_device *td = this_cpu_ptr(&tick_cpu_device);

	local_irq_disable();
	*saved = *td;
	td->evtdev = &p->local.ced;
	td->mode = TICKDEV_MODE_ONESHOT;
	WRITE_ONCE(p->holding, true);
}

static void player_swap_out(struct player *p, struct tick_device *saved)
{
	WRITE_ONCE(p->holding, false);
	*this_cpu_ptr(&tick_cpu_device) = *saved;
	local_irq_enable();
}

/*
 * Somebody else wants this CPU (a stop_machine() stopper, a woken task)
 * while the case is between two of its steps: lend the CPU out, with its
 * own tick device, and take it back. The case does not start a step (see
 * step_begin()) until every player holds again.
 */
static void player_lend(struct player *p, struct tick_device *saved)
{
	WRITE_ONCE(p->holding, false);
	smp_mb();	/* holding, then in_step; pairs with step_begin() */
	if (READ_ONCE(p->t->in_step)) {
		WRITE_ONCE(p->holding, true);
		return;
	}
	player_swap_out(p, saved);
	cond_resched();
	player_swap_in(p, saved);
}

/*
 * Held: the fake tick device stands in for the CPU's own, and interrupts
 * stay disabled so that the CPU's own tick does not run into the fake.
 * Orders are carried out until the release. Not longer than
 * PLAYER_HOLD_MS, since everybody waiting for this CPU waits meanwhile.
 */
static void player_hold(struct player *p)
{
	struct tick_device saved;
	ktime_t end;
	int op;

	player_swap_in(p, &saved);
	/* Done: the fake is in place (see play_start()). */
	smp_store_release(&p->op, PLAY_NONE);

	end = ktime_add_ms(ktime_get(), PLAYER_HOLD_MS);
	for (;;) {
		/* The order, then its argument (see play_start()). */
		op = smp_load_acquire(&p->op);
		if (op == PLAY_RELEASE)
			break;
		if (op != PLAY_NONE) {
			p->ret = play_one(p, op, p->arg);
			/* The result, then done. */
			smp_store_release(&p->op, PLAY_NONE);
		} else if (ktime_after(ktime_get(), end)) {
			WRITE_ONCE(p->gave_up, true);
			break;
		} else if (need_resched()) {
			player_lend(p, &saved);
		}
		cpu_relax();
	}

	player_swap_out(p, &saved);
	/* Done: the CPU's own device is back (see play_start()). */
	if (op == PLAY_RELEASE)
		/* See play_start(). */
		smp_store_release(&p->op, PLAY_NONE);
}

/* Between holds the CPU is the machine's, with its own tick device. */
static int player_fn(void *data)
{
	struct player *p = data;
	int op;

	/* See play_start(). */
	while ((op = smp_load_acquire(&p->op)) != PLAY_QUIT) {
		if (op == PLAY_HOLD)
			player_hold(p);
		cond_resched();
		cpu_relax();
	}
	complete(&p->quit);
	return 0;
}

static bool player_start(struct dtest *t, struct player *p, unsigned int cpu)
{
	struct task_struct *task;

	p->cpu = cpu;
	p->t = t;
	init_completion(&p->quit);
	task = kthread_create_on_cpu(player_fn, p, cpu, "tb_player/%u");
	if (IS_ERR(task))
		return false;
	wake_up_process(task);
	return true;
}

static void player_stop(struct player *p)
{
	/* See play_start(). */
	smp_store_release(&p->op, PLAY_QUIT);
	if (!wait_for_completion_timeout(&p->quit, msecs_to_jiffies(PLAYER_HOLD_MS)))
		pr_err("tick_broadcast_devices: the player on CPU%u does not end\n", p->cpu);
}

/*
 * Tell @p what to do; play_wait() for it to be done. @op is the handshake:
 * the case writes it after the argument (release), the player reads it
 * before the argument (acquire), and writes PLAY_NONE after its result
 * (release), which the case reads before the result (acquire).
 */
static void play_start(struct player *p, int op, long arg)
{
	p->arg = arg;
	/* See play_start(). */
	smp_store_release(&p->op, op);
}

/* Wait for @p to be done; false if it does not answer. */
static bool play_wait(struct dtest *t, struct player *p)
{
	ktime_t end = ktime_add_ms(ktime_get(), PLAYER_HOLD_MS);

	/* Done, then the result (see play_start()). */
	while (smp_load_acquire(&p->op) != PLAY_NONE) {
		if (READ_ONCE(p->gave_up) || ktime_after(ktime_get(), end)) {
			t->lost = true;
			return false;
		}
		if (!t->in_step)
			cond_resched();
		cpu_relax();
	}
	return true;
}

/* Have @p carry out @op, in a step; what it returned. */
static int play(struct dtest *t, struct player *p, int op, long arg)
{
	if (WARN_ON_ONCE(!t->in_step))
		return -EINVAL;
	play_start(p, op, arg);
	return play_wait(t, p) ? p->ret : -ETIMEDOUT;
}

/*
 * A step: every player holds, and this CPU does not let anything else
 * run until the step is over, so that a stop_machine() cannot stop it
 * while players wait for it. A player that lent its CPU out between two
 * steps must be back first.
 */
static void step_begin(struct dtest *t)
{
	ktime_t end = ktime_add_ms(ktime_get(), PLAYER_HOLD_MS);
	unsigned int i;
	bool all;

	preempt_disable();
	for (;;) {
		WRITE_ONCE(t->in_step, true);
		smp_mb();	/* in_step, then holding; pairs with player_lend() */
		for (i = 0, all = true; i < t->nr_players; i++)
			all &= READ_ONCE(t->p[i].holding);
		if (all)
			return;
		if (ktime_after(ktime_get(), end)) {
			t->lost = true;
			return;
		}
		WRITE_ONCE(t->in_step, false);
		preempt_enable();
		cond_resched();
		preempt_disable();
	}
}

static void step_end(struct dtest *t)
{
	WRITE_ONCE(t->in_step, false);
	preempt_enable();
}

/*
 * Every player puts its fake tick device in place and disables
 * interrupts, for one step of the case: anything that may look at another
 * CPU's tick device (expiry, the switch to oneshot mode, installation)
 * must find the fake. Nests; the case's own checks run outside.
 */
static void hold(struct dtest *t)
{
	unsigned int i;

	if (t->held++)
		return;
	for (i = 0; i < t->nr_players; i++)
		play_start(&t->p[i], PLAY_HOLD, 0);
	for (i = 0; i < t->nr_players; i++)
		play_wait(t, &t->p[i]);
	step_begin(t);
}

static void release(struct dtest *t)
{
	unsigned int i;

	if (--t->held)
		return;
	step_end(t);
	for (i = 0; i < t->nr_players; i++)
		play_start(&t->p[i], PLAY_RELEASE, 0);
	for (i = 0; i < t->nr_players; i++)
		play_wait(t, &t->p[i]);
}

/* ------------------------------------------------------------ a case */

/* A player's tick device, as a running CPU's: oneshot, stops in deep idle. */
static void local_init(struct player *p)
{
	struct fake_dev *f = &p->local;

	fake_init(f, "devices_local", CLOCK_EVT_FEAT_C3STOP, 100, cpumask_of(p->cpu));
	f->ced.event_handler = fake_local_tick;
	f->ced.broadcast = fake_ipi;
	f->ced.next_event = KTIME_MAX;
	clockevents_switch_state(&f->ced, CLOCK_EVT_STATE_ONESHOT);
	f->nr = 0;
	p->on = false;
	p->since = 0;
}

/* Give the broadcast back, unregister the fake devices. */
static void dtest_release(struct dtest *t)
{
	unsigned int i;

	if (t->taken)
		giveback(&t->machine);
	t->taken = false;
	for (i = 0; i < t->nr_bc; i++)
		KUNIT_EXPECT_EQ(t->test, clockevents_unbind_device(&t->bc[i].ced, t->self), 0);
	t->nr_bc = 0;
	if (t->irq >= 0)
		irq_free_desc(t->irq);
	t->irq = -1;
}

static void dtest_end(struct dtest *t)
{
	unsigned int i;

	if (t->held) {
		t->held = 1;
		release(t);
	}
	KUNIT_EXPECT_FALSE_MSG(t->test, t->lost, "a player stopped answering");
	for (i = 0; i < t->nr_players; i++)
		player_stop(&t->p[i]);
	dtest_release(t);
	dtest_now = NULL;
	/* A warning once per boot is all the kernel has: the first one counts. */
	KUNIT_EXPECT_FALSE_MSG(t->test, !t->warned && test_taint(TAINT_WARN),
			       "the kernel warned during the case");
}

/*
 * The CPU to run the case on: the one that advances jiffies if there is
 * one, since a player holding that duty with interrupts disabled would
 * stop jiffies for the whole case.
 */
static unsigned int dtest_self(void)
{
	int cpu = READ_ONCE(tick_do_timer_cpu);

	return cpu >= 0 && cpu_online(cpu) ? cpu : raw_smp_processor_id();
}

/* Take the broadcast over, from one CPU, with players on three others. */
static struct dtest *dtest_begin(struct kunit *test)
{
	unsigned int cpu;
	struct dtest *t;

	if (num_online_cpus() < NR_PLAYERS + 1)
		kunit_skip(test, "needs %d CPUs online", NR_PLAYERS + 1);
	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->test = test;
	t->irq = -1;
	t->warned = test_taint(TAINT_WARN);
	t->self = dtest_self();
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(t->self)), 0);

	if (takeover(&t->machine))
		kunit_skip(test, "the machine's broadcast is in use");
	t->taken = true;
	/* From here on, tick_broadcast_devices_exit() ends the case. */
	dtest_now = t;
	for_each_online_cpu(cpu) {
		struct player *p = &t->p[t->nr_players];

		if (cpu == t->self || t->nr_players == NR_PLAYERS)
			continue;
		p->cpu = cpu;
		local_init(p);
		KUNIT_ASSERT_TRUE_MSG(test, player_start(t, p, cpu), "no player on CPU%u", cpu);
		t->nr_players++;
	}
	t->t0 = ktime_get();
	return t;
}

/* The same, for a case that takes CPUs offline. */
static struct dtest *dtest_begin_hotplug(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "needs CPU hotplug");
	return dtest_begin(test);
}

/* Start over: the machine's broadcast back, and taken again. */
static void dtest_restart(struct dtest *t)
{
	unsigned int i;

	dtest_release(t);
	for (i = 0; i < t->nr_players; i++)
		local_init(&t->p[i]);
	t->forced = false;
	KUNIT_ASSERT_EQ(t->test, takeover(&t->machine), 0);
	t->taken = true;
	t->t0 = ktime_get();
}

/*
 * Register a fake broadcast device, rated above the ones before it, on
 * @p's CPU, or on this one if @p is NULL.
 */
static struct fake_dev *dt_register_bc_on(struct dtest *t, unsigned int features,
					  struct player *p)
{
	static const char * const names[NR_FAKE_BC] = { "devices_bc0", "devices_bc1" };
	struct fake_dev *f = &t->bc[t->nr_bc];

	fake_init(f, names[t->nr_bc], features, 400 + 10 * t->nr_bc, cpu_possible_mask);
	f->hook = t->bc_hook;
	t->bc_hook = NULL;
	if (features & CLOCK_EVT_FEAT_DYNIRQ) {
		t->irq = irq_alloc_desc(NUMA_NO_NODE);
		KUNIT_ASSERT_GE(t->test, t->irq, 0);
		f->ced.irq = t->irq;
	}
	t->nr_bc++;
	hold(t);
	if (p)
		play(t, p, PLAY_REGISTER, (long)&f->ced);
	else
		clockevents_register_device(&f->ced);
	release(t);
	return f;
}

static struct fake_dev *dt_register_bc(struct dtest *t, unsigned int features)
{
	return dt_register_bc_on(t, features, NULL);
}

/* The fake broadcast device installed, NULL if none is. */
static struct fake_dev *dt_bc(struct dtest *t)
{
	struct clock_event_device *ced = tick_get_broadcast_device()->evtdev;
	unsigned int i;

	for (i = 0; i < t->nr_bc; i++)
		if (ced == &t->bc[i].ced)
			return &t->bc[i];
	return NULL;
}

/* A time for a failure message, in microseconds since the case began. */
static const char *fmt_t(struct dtest *t, ktime_t when, char *buf, size_t len)
{
	if (when == KTIME_MAX)
		return "never";
	snprintf(buf, len, "%lld us", ktime_to_us(ktime_sub(when, t->t0)));
	return buf;
}

static bool in_oneshot_mask(struct player *p)
{
	return cpumask_test_cpu(p->cpu, tick_get_broadcast_oneshot_mask());
}

/*
 * What must hold after every step: every player's next event is delivered
 * in time. In oneshot mode by its own device, armed no later than the
 * event; by a wake IPI it got since it came to rely on the broadcast; or
 * by the broadcast device, armed no later than the event or, for an event
 * that has passed already, no later than now. In periodic mode the
 * broadcast device ticks every player that asked for it.
 */
static void expect_covered(struct dtest *t, const char *after)
{
	struct fake_dev *bc = dt_bc(t);
	ktime_t now = ktime_get(), fires = bc ? bc->armed : KTIME_MAX;
	char a[32], b[32], c[32];
	unsigned int i;

	for (i = 0; i < t->nr_players; i++) {
		struct player *p = &t->p[i];
		ktime_t ev = p->local.ced.next_event;

		if (!tick_broadcast_oneshot_active()) {
			if (p->on && bc && fires == KTIME_MAX)
				KUNIT_FAIL(t->test,
					   "after %s: CPU%u waits for periodic ticks, the broadcast device is off",
					   after, p->cpu);
			continue;
		}
		if (ev == KTIME_MAX || p->local.armed <= ev || delivered(p) > p->since)
			continue;
		if (fires <= max(ev, now))
			continue;
		KUNIT_FAIL(t->test,
			   "after %s: CPU%u's event is at %s, its own device fires %s, the broadcast device %s",
			   after, p->cpu, fmt_t(t, ev, a, sizeof(a)),
			   fmt_t(t, p->local.armed, b, sizeof(b)), fmt_t(t, fires, c, sizeof(c)));
	}
}

/* Enter deep idle on @p with the next event @wakeup; return the result. */
static int play_enter_ret(struct dtest *t, struct player *p, ktime_t wakeup)
{
	unsigned int states = count(&p->local, EV_STATE);
	char what[32];
	int ret;

	hold(t);
	ret = play(t, p, PLAY_ENTER, wakeup);
	release(t);
	if (ret) {
		KUNIT_EXPECT_EQ_MSG(t->test, count(&p->local, EV_STATE), states,
				    "CPU%u's refused enter changed its tick device", p->cpu);
		KUNIT_EXPECT_FALSE_MSG(t->test, in_oneshot_mask(p),
				       "CPU%u's refused enter left it in the oneshot mask", p->cpu);
	} else {
		p->since = delivered(p);
	}
	snprintf(what, sizeof(what), "CPU%u's enter", p->cpu);
	expect_covered(t, what);
	return ret;
}

static void play_enter(struct dtest *t, struct player *p, ktime_t wakeup)
{
	KUNIT_EXPECT_EQ_MSG(t->test, play_enter_ret(t, p, wakeup), 0,
			    "CPU%u's enter was refused", p->cpu);
}

static void play_exit(struct dtest *t, struct player *p)
{
	char what[32];

	hold(t);
	play(t, p, PLAY_EXIT, 0);
	release(t);
	snprintf(what, sizeof(what), "CPU%u's exit", p->cpu);
	expect_covered(t, what);
}

static void play_control(struct dtest *t, struct player *p, enum tick_broadcast_mode mode)
{
	char what[48];

	hold(t);
	play(t, p, PLAY_CONTROL, mode);
	release(t);
	if (mode == TICK_BROADCAST_FORCE)
		t->forced = true;
	if (mode != TICK_BROADCAST_OFF)
		p->on = true;
	else if (!t->forced)
		p->on = false;
	snprintf(what, sizeof(what), "CPU%u's broadcast control %d", p->cpu, mode);
	expect_covered(t, what);
}

/* @f fires: a oneshot device is no longer armed, a periodic one ticks on. */
static void fired(struct fake_dev *f)
{
	if (clockevent_state_periodic(&f->ced))
		f->armed = ktime_add_ns(ktime_get(), TICK_NSEC);
	else
		f->armed = KTIME_MAX;
}

/* Run @handler as the interrupt of @f, on the CPU running the case. */
static void play_handler(struct dtest *t, struct fake_dev *f,
			 void (*handler)(struct clock_event_device *ced), const char *what)
{
	unsigned long flags;

	hold(t);
	local_irq_save(flags);
	handler(&f->ced);
	local_irq_restore(flags);
	release(t);
	expect_covered(t, what);
}

/* @f fires, and its interrupt is handled on the CPU running the case. */
static void play_irq(struct dtest *t, struct fake_dev *f)
{
	fired(f);
	play_handler(t, f, f->ced.event_handler, "the broadcast interrupt");
}

/* @f fires, and its interrupt is handled on @p. */
static void play_irq_on(struct dtest *t, struct fake_dev *f, struct player *p)
{
	char what[48];

	fired(f);
	hold(t);
	play(t, p, PLAY_IRQ, 0);
	release(t);
	snprintf(what, sizeof(what), "the broadcast interrupt on CPU%u", p->cpu);
	expect_covered(t, what);
}

/*
 * The CPU running the case switches its tick to oneshot mode. The players
 * that asked for broadcast are handed over to the oneshot broadcast.
 */
static void play_switch_unchecked(struct dtest *t)
{
	unsigned int i;

	hold(t);
	tick_broadcast_switch_to_oneshot();
	release(t);
	for (i = 0; i < t->nr_players; i++)
		t->p[i].since = delivered(&t->p[i]);
}

static void play_switch(struct dtest *t)
{
	play_switch_unchecked(t);
	expect_covered(t, "the switch to oneshot mode");
}

/* Register a broadcast device and switch to oneshot mode. */
static struct fake_dev *dt_oneshot(struct dtest *t, unsigned int features)
{
	struct fake_dev *bc = dt_register_bc(t, features);

	KUNIT_ASSERT_PTR_EQ(t->test, dt_bc(t), bc);
	play_switch(t);
	return bc;
}

/* @p goes offline, as far as the broadcast is concerned. */
static void play_offline(struct dtest *t, struct player *p)
{
	char what[32];

	hold(t);
	local_irq_disable();
	tick_broadcast_offline(p->cpu);
	local_irq_enable();
	release(t);
	snprintf(what, sizeof(what), "CPU%u's offline", p->cpu);
	expect_covered(t, what);
}

/* The control CPU takes over what the dead @p held. */
static void play_pull(struct dtest *t, struct player *p)
{
	hold(t);
	hotplug_cpu__broadcast_tick_pull(p->cpu);
	release(t);
	expect_covered(t, "the pull");
}

static void play_suspend(struct dtest *t)
{
	hold(t);
	tick_suspend_broadcast();
	release(t);
	expect_covered(t, "suspend");
}

static void play_resume(struct dtest *t)
{
	hold(t);
	tick_resume_broadcast();
	release(t);
	expect_covered(t, "resume");
}

/* Must @p poll instead of going deep? */
static int play_expired(struct dtest *t, struct player *p)
{
	int ret;

	hold(t);
	ret = play(t, p, PLAY_EXPIRED, 0);
	release(t);
	return ret;
}

/* Just after a jiffy, or 100 ms, should a player hold jiffies after all. */
static void wait_for_jiffy(void)
{
	ktime_t end = ktime_add_ms(ktime_get(), 100);
	unsigned long j = jiffies;

	while (time_before_eq(jiffies, j) && ktime_before(ktime_get(), end))
		cpu_relax();
}

static void wait_until(ktime_t when)
{
	while (ktime_before(ktime_get(), when))
		cpu_relax();
}

static ktime_t in_ms(unsigned int ms)
{
	return ktime_add_ms(ktime_get(), ms);
}

/* ------------------------------------------------------------ cases */

/*
 * The periodic broadcast tick fires and its handler is held up (on the
 * lock) while the first CPU switches to oneshot mode, which hands the
 * periodic CPUs over to sleep until the next period. The late handler
 * must leave the device armed for them; a CPU that goes to sleep until
 * after their wakeup must not be armed for first either.
 */
static void devices_periodic_irq_across_the_switch_keeps_handed_over_cpus_armed(struct kunit *test)
{
	const unsigned int *features = test->param_value;
	void (*periodic_handler)(struct clock_event_device *ced);
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_register_bc(t, *features);
	ktime_t handed_over;

	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	wait_for_jiffy();
	play_control(t, &t->p[0], TICK_BROADCAST_ON);
	play_control(t, &t->p[1], TICK_BROADCAST_ON);
	KUNIT_ASSERT_NE(test, bc->armed, KTIME_MAX);

	periodic_handler = bc->ced.event_handler;
	/* Fired: its interrupt is on the way, and waits for the switch. */
	fired(bc);
	play_switch_unchecked(t);
	handed_over = t->p[0].local.ced.next_event;
	KUNIT_ASSERT_NE(test, handed_over, KTIME_MAX);
	play_handler(t, bc, periodic_handler, "a periodic interrupt held up across the switch");

	play_enter(t, &t->p[2], ktime_add_ns(handed_over, TICK_NSEC / 2));
}

/*
 * The switch to oneshot mode right after a periodic tick re-armed the
 * device emulating periodic ticks on oneshot mode, before the CPU that
 * advances jiffies moved the next period on: the CPUs handed over had the
 * tick of that period already, and the device is armed for the next one.
 * Each CPU must get each tick once: when the device fires at its arming,
 * a CPU it wakes must not have had that period's tick. (A device in
 * periodic state shows no arming to tell by; that case is not covered.)
 * The players are held with interrupts off and so is this CPU from the
 * period's read to the end of the switch, so that no tick can move the
 * period on meanwhile; where more CPUs are online than the players,
 * another CPU's tick can, and the case tries again.
 */
static void devices_switch_right_after_a_periodic_tick_ticks_each_cpu_once(struct kunit *test)
{
	unsigned int i, attempt, before[NR_PLAYERS], ticked[NR_PLAYERS];
	struct dtest *t = dtest_begin(test);
	ktime_t next, armed;
	struct fake_dev *bc;
	char a[32], b[32];
	bool moved;

	for (attempt = 0; ; attempt++) {
		bc = dt_register_bc(t, 0);
		KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
		for (i = 0; i < t->nr_players; i++)
			play_control(t, &t->p[i], TICK_BROADCAST_ON);
		hold(t);
		wait_for_jiffy();
		local_irq_disable();
		next = READ_ONCE(tick_next_period);
		/* Due at the period, and fired early as if it were there. */
		bc->ced.next_event = next;
		for (i = 0; i < t->nr_players; i++)
			before[i] = ipis(&t->p[i]);
		fired(bc);
		bc->ced.event_handler(&bc->ced);
		for (i = 0; i < t->nr_players; i++)
			ticked[i] = ipis(&t->p[i]);
		play_switch_unchecked(t);
		moved = READ_ONCE(tick_next_period) != next;
		local_irq_enable();
		release(t);
		if (!moved)
			break;
		if (attempt == 10)
			kunit_skip(test, "a jiffy passed between tick and switch every time");
		dtest_restart(t);
	}
	for (i = 0; i < t->nr_players; i++)
		KUNIT_ASSERT_EQ_MSG(test, ticked[i], before[i] + 1,
				    "CPU%u had no periodic tick", t->p[i].cpu);

	armed = bc->armed;
	KUNIT_ASSERT_NE_MSG(test, armed, KTIME_MAX,
			    "nothing is armed for the CPUs handed over at the switch");
	wait_until(armed);
	play_irq(t, bc);
	for (i = 0; i < t->nr_players; i++) {
		if (ipis(&t->p[i]) == ticked[i] || armed >= ktime_add_ns(next, TICK_NSEC))
			continue;
		KUNIT_FAIL(test, "CPU%u had the tick at %s twice: the device fired again at %s",
			   t->p[i].cpu, fmt_t(t, next, a, sizeof(a)),
			   fmt_t(t, armed, b, sizeof(b)));
	}
}

/*
 * At the switch to oneshot mode, the device emulating periodic ticks on
 * oneshot mode is armed for the next tick already, which the handed over
 * CPUs sleep until. A CPU entering deep idle afterwards with a later
 * wakeup must not move the device's arming past theirs.
 */
static void devices_enter_after_the_switch_keeps_handed_over_cpus_armed(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_register_bc(t, 0);
	ktime_t handed_over;

	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	play_control(t, &t->p[0], TICK_BROADCAST_ON);
	play_control(t, &t->p[1], TICK_BROADCAST_ON);
	play_switch(t);
	handed_over = t->p[0].local.ced.next_event;
	KUNIT_ASSERT_NE(test, handed_over, KTIME_MAX);
	play_enter(t, &t->p[2], ktime_add_ns(handed_over, TICK_NSEC / 2));
	KUNIT_EXPECT_LE(test, bc->armed, handed_over);
}

/* Expiry wakes the CPUs whose time came, and re-arms for the next one. */
static void devices_expiry_wakes_due_cpus_and_rearms_for_the_next(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_oneshot(t, 0);
	struct player *a = &t->p[0], *b = &t->p[1];
	ktime_t tb = in_ms(30000);

	play_enter(t, a, ktime_sub_ms(ktime_get(), 1));
	play_enter(t, b, tb);
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, ipis(a), 1);
	KUNIT_EXPECT_EQ(test, ipis(b), 0);
	KUNIT_EXPECT_EQ(test, bc->armed, tb);

	/* Woken: the IPI delivers its event, its device is not programmed. */
	play_exit(t, a);
	KUNIT_EXPECT_EQ(test, count(&a->local, EV_PROGRAM), 0);
	play_exit(t, b);
	KUNIT_EXPECT_EQ(test, b->local.armed, tb);
}

/*
 * An expiry handled on a CPU that is due itself runs that CPU's own tick
 * handler there, and wakes the others by IPI.
 */
static void devices_expiry_on_a_due_cpu_runs_its_own_handler(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_oneshot(t, 0);
	struct player *a = &t->p[0], *b = &t->p[1];

	play_enter(t, a, ktime_sub_ms(ktime_get(), 1));
	play_enter(t, b, ktime_sub_ms(ktime_get(), 1));
	play_irq_on(t, bc, a);
	KUNIT_EXPECT_EQ(test, count(&a->local, EV_TICK), 1);
	KUNIT_EXPECT_EQ(test, ipis(a), 0);
	KUNIT_EXPECT_EQ(test, ipis(b), 1);
	KUNIT_EXPECT_EQ(test, bc->armed, KTIME_MAX);
	play_exit(t, a);
	play_exit(t, b);
}

/*
 * A better broadcast device registered while CPUs sleep replaces the old
 * one, which is detached and handles nothing any more, and is armed at
 * once; its first interrupt re-arms it for the earliest sleeper.
 */
static void devices_new_device_replaces_old_one_while_cpus_sleep(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *old = dt_oneshot(t, 0), *bc;
	struct player *a = &t->p[0], *b = &t->p[1];
	ktime_t ta = in_ms(30000), tb = in_ms(40000);

	play_enter(t, a, ta);
	play_enter(t, b, tb);
	KUNIT_EXPECT_EQ(test, old->armed, ta);

	bc = dt_register_bc(t, 0);
	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	expect_covered(t, "the replacement");
	KUNIT_EXPECT_TRUE(test, clockevent_state_detached(&old->ced));
	KUNIT_EXPECT_EQ(test, old->armed, KTIME_MAX);
	KUNIT_EXPECT_TRUE(test, old->ced.event_handler == clockevents_handle_noop);

	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	KUNIT_EXPECT_EQ(test, ipis(a) + ipis(b), 0);
	play_exit(t, a);
	play_exit(t, b);
}

/*
 * An interrupt of the old device that was already being handled when a
 * better device replaced it (its handler waiting for the broadcast lock)
 * must leave the old device alone: it is detached, and may be unregistered
 * and freed with its module right after. The sleepers are the new
 * device's.
 */
static void devices_late_interrupt_of_replaced_device_leaves_it_alone(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *old = dt_oneshot(t, 0), *bc;
	void (*old_handler)(struct clock_event_device *ced);
	struct player *a = &t->p[0], *b = &t->p[1];
	ktime_t ta = in_ms(30000), tb = in_ms(40000);

	play_enter(t, a, ta);
	play_enter(t, b, tb);
	old_handler = old->ced.event_handler;
	fired(old);
	bc = dt_register_bc(t, 0);
	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	play_handler(t, old, old_handler, "a late interrupt of the replaced device");

	KUNIT_EXPECT_TRUE(test, clockevent_state_detached(&old->ced));
	KUNIT_EXPECT_EQ_MSG(test, old->armed, KTIME_MAX,
			    "the replaced device was programmed by its own late interrupt");
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	play_exit(t, a);
	play_exit(t, b);
}

/* Wait up to 2 s for the player the hook started to spin on the lock. */
static void wait_for_lock_waiter(struct dtest *t)
{
	ktime_t end = ktime_add_ms(ktime_get(), 2000);

	while (!raw_spin_is_contended(&tick_broadcast_lock) && ktime_before(ktime_get(), end))
		cpu_relax();
	t->spun = raw_spin_is_contended(&tick_broadcast_lock);
}

/*
 * The installation programs the new device, the lock held: the late
 * interrupt starts on a player and spins on the lock, which it gets as
 * soon as the installation lets go of it. From then on, the new device is
 * watched for a programming without its oneshot handler.
 */
static void late_irq_spins(struct fake_dev *f)
{
	struct dtest *t = dtest_now;

	play_start(&t->p[2], PLAY_LATE_IRQ, 0);
	wait_for_lock_waiter(t);
	f->watch = true;
}

/*
 * The old device's interrupt waits for the lock while a better device
 * replaces it in oneshot mode, and gets it as soon as the installation
 * lets go of it: between the installation and the switch of the new
 * device to oneshot mode, if the replacement makes those two steps. It
 * must program neither device then: the old one is detached, and the
 * new one has no oneshot handler yet.
 */
static void devices_late_interrupt_inside_the_replacement_programs_no_device(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *old = dt_oneshot(t, 0), *bc = &t->bc[t->nr_bc];
	struct player *a = &t->p[0], *b = &t->p[1];
	unsigned int programmed;
	ktime_t ta = in_ms(30000);

	/* ON: the installation starts the new device under the lock. */
	play_control(t, b, TICK_BROADCAST_ON);
	play_enter(t, a, ta);
	t->late = old;
	t->late_handler = old->ced.event_handler;
	fired(old);
	programmed = count(old, EV_PROGRAM);

	hold(t);
	t->bc_hook = late_irq_spins;
	KUNIT_ASSERT_PTR_EQ(test, dt_register_bc(t, 0), bc);
	KUNIT_EXPECT_TRUE_MSG(test, play_wait(t, &t->p[2]), "the late interrupt did not end");
	release(t);
	KUNIT_ASSERT_TRUE_MSG(test, bc->watch,
			      "the installation did not program the new device under the lock");
	/* A lock whose waiters do not show (test-and-set) hides the window. */
	if (!t->spun)
		kunit_skip(test, "the late interrupt was not seen waiting for the lock in 2 s");

	KUNIT_EXPECT_TRUE(test, clockevent_state_detached(&old->ced));
	KUNIT_EXPECT_EQ_MSG(test, count(old, EV_PROGRAM), programmed,
			    "the replaced device was programmed by its own late interrupt");
	KUNIT_EXPECT_EQ_MSG(test, bc->unready, 0,
			    "the new device was programmed before it had its oneshot handler");
	expect_covered(t, "the replacement");
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	play_exit(t, a);
}

/* As late_irq_spins(), with a player's enter for dtest.spin_enter. */
static void enter_spins(struct fake_dev *f)
{
	struct dtest *t = dtest_now;

	play_start(&t->p[2], PLAY_ENTER, t->spin_enter);
	wait_for_lock_waiter(t);
	f->watch = true;
}

/*
 * A CPU enters deep idle while a better device replaces the broadcast
 * device in oneshot mode, and gets the lock as soon as the installation
 * lets go of it. Nobody may program the new device before it has its
 * oneshot handler. Installed in one locked step, the device has it and
 * is already armed to fire at once (the installation re-evaluates it for
 * the sleepers), so the enter programs nothing; installed in two steps,
 * the enter programmed the device while it still had its periodic
 * handler.
 */
static void devices_enter_inside_the_replacement_finds_the_device_ready(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct player *a = &t->p[0], *b = &t->p[1], *c = &t->p[2];
	ktime_t ta = in_ms(30000), tc = in_ms(20000);
	struct fake_dev *bc;

	dt_oneshot(t, 0);
	bc = &t->bc[t->nr_bc];
	/* ON: the installation starts the new device under the lock. */
	play_control(t, b, TICK_BROADCAST_ON);
	play_enter(t, a, ta);

	hold(t);
	t->spin_enter = tc;
	t->bc_hook = enter_spins;
	KUNIT_ASSERT_PTR_EQ(test, dt_register_bc(t, 0), bc);
	KUNIT_EXPECT_TRUE_MSG(test, play_wait(t, c), "the enter did not end");
	release(t);
	KUNIT_ASSERT_TRUE_MSG(test, bc->watch,
			      "the installation did not program the new device under the lock");
	if (!t->spun)
		kunit_skip(test, "the enter was not seen waiting for the lock in 2 s");

	KUNIT_ASSERT_EQ_MSG(test, c->ret, 0, "the enter inside the replacement was refused");
	c->since = delivered(c);
	KUNIT_EXPECT_EQ_MSG(test, bc->unready, 0,
			    "the enter programmed the new device before it had its oneshot handler");
	KUNIT_EXPECT_LE(test, bc->armed, tc);
	expect_covered(t, "the enter inside the replacement");
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, bc->armed, tc);
	play_exit(t, c);
	play_exit(t, a);
}

/*
 * A CPU forced at its exit (its event due, the broadcast interrupt not yet
 * handled) when a better device replaces the broadcast device: the old
 * device's interrupt will not come, its handler being the noop now. The
 * new device must be armed for the forced CPU, which polls until then.
 */
static void devices_replacement_arms_the_new_device_for_a_forced_cpu(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct player *a = &t->p[0];
	ktime_t ta = in_ms(2);
	struct fake_dev *bc;

	dt_oneshot(t, 0);
	play_enter(t, a, ta);
	wait_until(ta);
	play_exit(t, a);
	KUNIT_ASSERT_EQ(test, play_expired(t, a), 1);

	bc = dt_register_bc(t, 0);
	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	KUNIT_EXPECT_NE_MSG(test, bc->armed, KTIME_MAX, "nothing is armed for the forced CPU");
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, ipis(a), 1);
	KUNIT_EXPECT_EQ(test, play_expired(t, a), 0);
}

/*
 * A CPU handed over at the switch installs a better device before the
 * periodic tick it was handed over for: it still waits for that tick,
 * with its local device stopped, and the new device must deliver it.
 */
static void devices_replacement_from_a_handed_over_cpu_keeps_its_tick(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct player *a = &t->p[0];
	struct fake_dev *bc = dt_register_bc(t, 0);
	unsigned int before;
	ktime_t handed_over;

	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	play_control(t, a, TICK_BROADCAST_ON);
	play_switch(t);
	handed_over = a->local.ced.next_event;
	KUNIT_ASSERT_NE(test, handed_over, KTIME_MAX);

	bc = dt_register_bc_on(t, 0, a);
	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	expect_covered(t, "a replacement installed by a CPU handed over");
	before = ipis(a);
	wait_until(handed_over);
	play_irq(t, bc);
	KUNIT_EXPECT_EQ_MSG(test, ipis(a), before + 1,
			    "CPU%u lost the tick it was handed over for", a->cpu);
}

/*
 * The last TICK_BROADCAST_OFF in oneshot mode leaves the device armed
 * for a CPU still asleep; once nobody relies on it, it is shut down, and
 * the next sleeper brings it back.
 */
static void devices_last_off_keeps_device_armed_while_cpus_sleep(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_oneshot(t, 0);
	struct player *a = &t->p[0], *b = &t->p[1];
	ktime_t ta = in_ms(30000);

	play_control(t, a, TICK_BROADCAST_ON);
	play_control(t, b, TICK_BROADCAST_ON);
	play_enter(t, a, ta);
	play_control(t, a, TICK_BROADCAST_OFF);
	play_control(t, b, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	play_exit(t, a);

	play_control(t, b, TICK_BROADCAST_ON);
	play_control(t, b, TICK_BROADCAST_OFF);
	play_enter(t, b, ta);
	KUNIT_EXPECT_TRUE(test, clockevent_state_oneshot(&bc->ced));
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	play_exit(t, b);
}

/* In periodic mode the last OFF stops the device and restarts the CPU's. */
static void devices_periodic_last_off_stops_device(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_register_bc(t, 0);
	struct player *a = &t->p[0];

	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	play_control(t, a, TICK_BROADCAST_ON);
	KUNIT_EXPECT_NE(test, bc->armed, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, a->local.armed, KTIME_MAX);
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, ipis(a), 1);
	play_control(t, a, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_TRUE(test, clockevent_state_shutdown(&bc->ced));
	KUNIT_EXPECT_NE(test, a->local.armed, KTIME_MAX);
}

/*
 * After TICK_BROADCAST_FORCE an OFF is ignored: in periodic mode the
 * device keeps ticking the CPU, whose own device stays off.
 */
static void devices_off_after_force_keeps_periodic_ticks(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_register_bc(t, 0);
	struct player *a = &t->p[0];

	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	play_control(t, a, TICK_BROADCAST_FORCE);
	play_control(t, a, TICK_BROADCAST_OFF);
	KUNIT_EXPECT_NE(test, bc->armed, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, a->local.armed, KTIME_MAX);
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, ipis(a), 1);
}

/*
 * A better device registered in periodic mode takes the periodic ticks
 * over; the old one is detached and a late interrupt of it does nothing.
 */
static void devices_new_device_in_periodic_mode_takes_the_ticks(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *old = dt_register_bc(t, 0), *bc;
	void (*old_handler)(struct clock_event_device *ced);
	struct player *a = &t->p[0];

	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), old);
	play_control(t, a, TICK_BROADCAST_ON);
	old_handler = old->ced.event_handler;
	bc = dt_register_bc(t, 0);
	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	expect_covered(t, "the replacement");
	KUNIT_EXPECT_NE(test, bc->armed, KTIME_MAX);
	KUNIT_EXPECT_TRUE(test, clockevent_state_detached(&old->ced));
	KUNIT_EXPECT_TRUE(test, old->ced.event_handler != old_handler);

	play_handler(t, old, old->ced.event_handler, "a late interrupt of the old device");
	KUNIT_EXPECT_EQ(test, ipis(a), 0);
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, ipis(a), 1);
}

/* In periodic mode the last periodic CPU going offline stops the device. */
static void devices_offline_of_last_periodic_cpu_stops_device(struct kunit *test)
{
	struct dtest *t = dtest_begin_hotplug(test);
	struct fake_dev *bc = dt_register_bc(t, 0);
	struct player *a = &t->p[0];

	KUNIT_ASSERT_PTR_EQ(test, dt_bc(t), bc);
	play_control(t, a, TICK_BROADCAST_ON);
	KUNIT_EXPECT_NE(test, bc->armed, KTIME_MAX);
	a->on = false;
	play_offline(t, a);
	KUNIT_EXPECT_TRUE(test, clockevent_state_shutdown(&bc->ced));
	KUNIT_EXPECT_TRUE(test, cpumask_empty(tick_get_broadcast_mask()));
}

/*
 * Suspend shuts the device down; resume brings it back and, with a CPU
 * still relying on it, arms it at once so that expiry looks at every
 * sleeper again. With nobody relying on it, it stays off.
 */
static void devices_resume_rearms_for_sleeping_cpus(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_oneshot(t, 0);
	struct player *a = &t->p[0];
	ktime_t ta = in_ms(30000);

	play_enter(t, a, ta);
	hold(t);
	tick_suspend_broadcast();
	release(t);
	KUNIT_EXPECT_TRUE(test, clockevent_state_shutdown(&bc->ced));
	KUNIT_EXPECT_EQ(test, bc->armed, KTIME_MAX);
	play_resume(t);
	KUNIT_EXPECT_EQ(test, count(bc, EV_RESUME), 1);
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	play_exit(t, a);

	play_suspend(t);
	play_resume(t);
	KUNIT_EXPECT_EQ(test, bc->armed, KTIME_MAX);
}

/*
 * The CPU the device's interrupt is steered to goes offline with its
 * event forced: the device stays armed for the others, and the next
 * interrupt wakes nobody and steers to the next sleeper.
 */
static void devices_offline_of_steered_cpu_keeps_others_armed(struct kunit *test)
{
	struct dtest *t = dtest_begin_hotplug(test);
	struct fake_dev *bc = dt_oneshot(t, CLOCK_EVT_FEAT_DYNIRQ);
	struct player *a = &t->p[0], *b = &t->p[1], *c = &t->p[2];
	ktime_t ta = in_ms(30000), tb = in_ms(40000);

	play_enter(t, b, tb);
	play_enter(t, a, ta);
	KUNIT_EXPECT_TRUE(test, cpumask_equal(bc->ced.cpumask, cpumask_of(a->cpu)));
	play_enter(t, c, ktime_sub_ms(ktime_get(), 1));
	KUNIT_EXPECT_TRUE(test, cpumask_equal(bc->ced.cpumask, cpumask_of(c->cpu)));
	play_exit(t, c);
	KUNIT_EXPECT_EQ(test, play_expired(t, c), 1);

	play_offline(t, c);
	c->local.ced.next_event = KTIME_MAX;
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, ipis(c) + ipis(a) + ipis(b), 0);
	KUNIT_EXPECT_EQ(test, bc->armed, ta);
	KUNIT_EXPECT_TRUE(test, cpumask_equal(bc->ced.cpumask, cpumask_of(a->cpu)));
	play_exit(t, a);
	play_exit(t, b);
}

/*
 * A CPU whose event expired at its exit, before the broadcast interrupt
 * came, is forced: it polls until that interrupt delivers the event. An
 * enter meanwhile is refused and leaves no trace: the CPU stays out of
 * the oneshot mask with its tick device running, since a caller that
 * ignores the refusal and stops the tick itself would otherwise sleep
 * with nothing armed for it.
 */
static void devices_refused_forced_enter_leaves_no_trace(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_oneshot(t, 0);
	struct player *a = &t->p[0];
	ktime_t ta = in_ms(2);

	play_enter(t, a, ta);
	wait_until(ta);
	play_exit(t, a);
	KUNIT_EXPECT_EQ(test, play_expired(t, a), 1);
	KUNIT_EXPECT_EQ(test, play_enter_ret(t, a, ta), -EBUSY);

	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, ipis(a), 1);
	KUNIT_EXPECT_EQ(test, play_expired(t, a), 0);
}

/*
 * A CPU whose event moved earlier while it slept (a timer queued by an
 * interrupt handled inside a halt-style deep state) and passed before its
 * exit, while the broadcast device is armed for later: its exit must
 * program its own device, or the event waits for the broadcast device.
 */
static void devices_exit_after_event_moved_earlier_reprograms_local_device(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct player *a = &t->p[0];
	ktime_t early;

	dt_oneshot(t, 0);
	play_enter(t, a, in_ms(30000));
	early = ktime_sub_ms(ktime_get(), 1);
	a->local.ced.next_event = early;
	play_exit(t, a);
	KUNIT_EXPECT_EQ(test, a->local.armed, early);
	KUNIT_EXPECT_EQ(test, play_expired(t, a), 0);
}

/*
 * TICK_BROADCAST_ON from inside a halt-style deep state (an interrupt
 * handled between enter and exit) must leave the CPU asleep on the
 * broadcast: its wakeup comes by IPI, and its exit restarts its device.
 */
static void devices_broadcast_on_inside_deep_idle_keeps_the_sleeper(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_oneshot(t, 0);
	struct player *a = &t->p[0];
	ktime_t ta = in_ms(2);

	play_enter(t, a, ta);
	play_control(t, a, TICK_BROADCAST_ON);
	KUNIT_EXPECT_TRUE(test, in_oneshot_mask(a));
	wait_until(ta);
	play_irq(t, bc);
	KUNIT_EXPECT_EQ(test, ipis(a), 1);
	play_exit(t, a);
	KUNIT_EXPECT_TRUE(test, clockevent_state_oneshot(&a->local.ced));
}

/*
 * The hrtimer broadcast runs on the CPU that armed it last, which must
 * not go deep while it does: its enter is refused and leaves no trace.
 * Another CPU arming it earlier takes it over, and the first may sleep.
 */
static void devices_hrtimer_owner_is_refused_deep_idle(struct kunit *test)
{
	struct dtest *t = dtest_begin(test);
	struct fake_dev *bc = dt_oneshot(t, CLOCK_EVT_FEAT_HRTIMER);
	struct player *a = &t->p[0], *b = &t->p[1], *c = &t->p[2];

	KUNIT_EXPECT_EQ(test, play_enter_ret(t, a, in_ms(30000)), -EBUSY);
	KUNIT_EXPECT_EQ(test, bc->ced.bound_on, a->cpu);
	play_enter(t, b, in_ms(40000));
	KUNIT_EXPECT_EQ(test, play_enter_ret(t, a, in_ms(50000)), -EBUSY);

	KUNIT_EXPECT_EQ(test, play_enter_ret(t, c, in_ms(20000)), -EBUSY);
	KUNIT_EXPECT_EQ(test, bc->ced.bound_on, c->cpu);
	play_enter(t, a, in_ms(50000));
	play_exit(t, a);
	play_exit(t, b);
}

/*
 * The CPU holding the hrtimer broadcast goes offline while others sleep:
 * the control CPU takes it over and the sleepers keep their wakeup.
 */
static void devices_pull_takes_hrtimer_broadcast_from_dead_owner(struct kunit *test)
{
	struct dtest *t = dtest_begin_hotplug(test);
	struct fake_dev *bc = dt_oneshot(t, CLOCK_EVT_FEAT_HRTIMER);
	struct player *a = &t->p[0], *b = &t->p[1];
	ktime_t tb = in_ms(40000);

	KUNIT_EXPECT_EQ(test, play_enter_ret(t, a, in_ms(30000)), -EBUSY);
	play_enter(t, b, tb);
	KUNIT_EXPECT_EQ(test, bc->ced.bound_on, a->cpu);

	a->local.ced.next_event = KTIME_MAX;
	play_offline(t, a);
	play_pull(t, a);
	KUNIT_EXPECT_EQ(test, bc->ced.bound_on, t->self);
	KUNIT_EXPECT_LE(test, bc->armed, tb);
	play_exit(t, b);
}

/*
 * Built-in suites run right after the initcalls, possibly before every
 * CPU's tick has switched to oneshot mode, and a switch while a case runs
 * would switch the case's broadcast. Give the switch up to ten seconds,
 * or one if no CPU switches at all (nohz=off highres=off).
 */
static int tick_broadcast_devices_init(struct kunit_suite *suite)
{
	unsigned int cpu, oneshot, waited_ms;

	for (waited_ms = 0; waited_ms < 10000; waited_ms += 20) {
		oneshot = 0;
		for_each_online_cpu(cpu)
			oneshot += READ_ONCE(per_cpu(tick_cpu_device, cpu).mode) ==
				   TICKDEV_MODE_ONESHOT;
		if (oneshot == num_online_cpus() || (!oneshot && waited_ms >= 1000))
			break;
		msleep(20);
	}
	return 0;
}

/* Periodic broadcast emulated on a oneshot device, or a periodic one. */
static const unsigned int periodic_features[] = { 0, CLOCK_EVT_FEAT_PERIODIC };

static void periodic_features_desc(const unsigned int *features, char *desc)
{
	strscpy(desc, *features ? "periodic device" : "oneshot device", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(periodic_features, periodic_features, periodic_features_desc);

static struct kunit_case tick_broadcast_devices_cases[] = {
	KUNIT_CASE_PARAM(devices_periodic_irq_across_the_switch_keeps_handed_over_cpus_armed,
			 periodic_features_gen_params),
	KUNIT_CASE(devices_switch_right_after_a_periodic_tick_ticks_each_cpu_once),
	KUNIT_CASE(devices_enter_after_the_switch_keeps_handed_over_cpus_armed),
	KUNIT_CASE(devices_expiry_wakes_due_cpus_and_rearms_for_the_next),
	KUNIT_CASE(devices_expiry_on_a_due_cpu_runs_its_own_handler),
	KUNIT_CASE(devices_new_device_replaces_old_one_while_cpus_sleep),
	KUNIT_CASE(devices_late_interrupt_of_replaced_device_leaves_it_alone),
	KUNIT_CASE(devices_late_interrupt_inside_the_replacement_programs_no_device),
	KUNIT_CASE(devices_enter_inside_the_replacement_finds_the_device_ready),
	KUNIT_CASE(devices_replacement_arms_the_new_device_for_a_forced_cpu),
	KUNIT_CASE(devices_replacement_from_a_handed_over_cpu_keeps_its_tick),
	KUNIT_CASE(devices_last_off_keeps_device_armed_while_cpus_sleep),
	KUNIT_CASE(devices_periodic_last_off_stops_device),
	KUNIT_CASE(devices_off_after_force_keeps_periodic_ticks),
	KUNIT_CASE(devices_new_device_in_periodic_mode_takes_the_ticks),
	KUNIT_CASE(devices_offline_of_last_periodic_cpu_stops_device),
	KUNIT_CASE(devices_resume_rearms_for_sleeping_cpus),
	KUNIT_CASE(devices_offline_of_steered_cpu_keeps_others_armed),
	KUNIT_CASE(devices_refused_forced_enter_leaves_no_trace),
	KUNIT_CASE(devices_exit_after_event_moved_earlier_reprograms_local_device),
	KUNIT_CASE(devices_broadcast_on_inside_deep_idle_keeps_the_sleeper),
	KUNIT_CASE(devices_hrtimer_owner_is_refused_deep_idle),
	KUNIT_CASE(devices_pull_takes_hrtimer_broadcast_from_dead_owner),
	{}
};

/* After each case, whether it ended or failed an assertion. */
static void tick_broadcast_devices_exit(struct kunit *test)
{
	if (dtest_now && dtest_now->test == test)
		dtest_end(dtest_now);
}

static struct kunit_suite tick_broadcast_devices_suite = {
	.name = "tick_broadcast_devices",
	.suite_init = tick_broadcast_devices_init,
	.exit = tick_broadcast_devices_exit,
	.test_cases = tick_broadcast_devices_cases,
};

kunit_test_suite(tick_broadcast_devices_suite);
