// SPDX-License-Identifier: GPL-2.0
/*
 * tbprobe: the guest side of the tick broadcast testbed, linked statically
 * into the initramfs.
 *
 *   tbprobe lat NAME COUNT MIN_US MAX_US SEED
 *	On every online CPU at once, COUNT times: sleep until an absolute
 *	CLOCK_MONOTONIC time MIN_US..MAX_US ahead (clock_nanosleep with
 *	TIMER_ABSTIME) and record how late the wakeup was. Prints per-CPU
 *	and overall percentiles, then the raw samples, as "@@" lines. A
 *	wakeup LATE_LINE_MS or more late is also printed at once, as
 *	"@@late NAME cpu=C late=NS", so that the host can tell from when
 *	it saw the line whether it had kept the guest from running then.
 *
 *   tbprobe storm NAME ROUNDS MIN_US MAX_US SEED
 *	Every online CPU sleeps ROUNDS times to one absolute deadline shared
 *	by all, each MIN_US..MAX_US after the one before: one broadcast
 *	expiry wakes every CPU at once. Prints the lateness of the last CPU
 *	out of each round ("cpu=last", with its raw samples), of every CPU
 *	and of all together; and "@@storm NAME missed=N" for the rounds some
 *	CPU began after their deadline had passed (no wakeup was measured
 *	there: its lateness is how late the CPU came back from the round
 *	before).
 *
 *   tbprobe soak NAME STOPFILE MIN_US MAX_US SEED HANG_S
 *	The same sleeps, on every CPU online at the start, until STOPFILE
 *	exists (CPUs may go offline meanwhile: the sleeper then moves).
 *	Counts sleeps begun and completed per CPU; a sleeper still asleep
 *	HANG_S seconds after the stop (or after its target) is reported
 *	stuck. Prints "@@soak" lines: counts, percentiles, the worst. A
 *	sleep that ends over 100 ms late and began while a suspend was under
 *	way, or saw one begin, spanned a suspend: the frozen task only ran
 *	again after the resume. It is counted as "suspended" and left out of
 *	the lateness. guest/init makes /tmp/s2idle.gen odd before each
 *	suspend and even once it returned (the kernel's own suspend count
 *	moves only after the tasks thawed).
 *
 *   tbprobe exit CODE
 *	Write CODE to QEMU's isa-debug-exit port (0xf4); QEMU exits with
 *	status CODE * 2 + 1. x86 only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <sys/io.h>
#endif

#define MAX_CPUS 64
#define LATE_LINE_MS 50

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: reproducible across libcs */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/*
 * Pin the caller to @cpu. A hotplug storm running beside the probe may
 * have taken @cpu offline since the list of CPUs was read (EINVAL): wait
 * for it to come back, as the storm brings every CPU back within a fraction
 * of a second. A CPU that stays offline for 10 s leaves the sleeper
 * unpinned; it still measures, on whichever CPU it lands. A CPU that goes
 * offline after the pin moves its sleeper as well, so neither case loses a
 * sample.
 */
static void pin_to(int cpu)
{
	struct timespec pause = { .tv_nsec = 10 * 1000 * 1000 };
	cpu_set_t set;
	int tries;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	for (tries = 0; tries < 1000; tries++) {
		if (!sched_setaffinity(0, sizeof(set), &set))
			return;
		if (errno != EINVAL)
			break;
		nanosleep(&pause, NULL);
	}
	fprintf(stderr, "tbprobe: cpu%d: sched_setaffinity: %s; unpinned\n",
		cpu, strerror(errno));
}

/* A lat or storm run: COUNT MIN_US MAX_US SEED of its command line. */
struct run_args {
	int count, min_us, max_us;
	uint64_t seed;
	const char *name;
};

static int parse_run(int argc, char **argv, struct run_args *a)
{
	if (argc != 7)
		return -1;
	a->count = atoi(argv[3]);
	a->min_us = atoi(argv[4]);
	a->max_us = atoi(argv[5]);
	a->seed = strtoull(argv[6], NULL, 0);
	a->name = argv[2];
	return a->count <= 0 || a->min_us <= 0 || a->max_us < a->min_us ? -1 : 0;
}

/*
 * One CPU's sleeper: writes each sleep's lateness to @fd. With @start 0
 * (lat) each sleep is MIN_US..MAX_US from the time it begins, a sequence
 * of the CPU's own; otherwise (storm) each deadline is MIN_US..MAX_US
 * after the one before, from @start, the same sequence on every CPU, and
 * after the samples it writes how many rounds began past their deadline.
 */
static void sleeper(int cpu, const struct run_args *a, int64_t start, int fd)
{
	uint64_t rng = a->seed * 7919 + (start ? 0 : cpu) + 1;
	int64_t target = start, missed = 0;
	int i;

	pin_to(cpu);
	for (i = 0; i < a->count; i++) {
		int64_t delay = (a->min_us + rng_next(&rng) % (a->max_us - a->min_us + 1)) * 1000LL;
		struct timespec ts;
		int64_t late;

		target = (start ? target : now_ns()) + delay;
		ts.tv_sec = target / 1000000000;
		ts.tv_nsec = target % 1000000000;
		if (now_ns() >= target)
			missed++;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		late = now_ns() - target;
		if (write(fd, &late, sizeof(late)) != sizeof(late))
			exit(1);
		if (!start && late >= LATE_LINE_MS * 1000000LL) {
			char line[96];
			int n = snprintf(line, sizeof(line), "@@late %s cpu=%d late=%lld\n",
					 a->name, cpu, (long long)late);

			/* one write: the lines of several CPUs do not mix */
			if (write(1, line, n) != n)
				exit(1);
		}
	}
	if (start && write(fd, &missed, sizeof(missed)) != sizeof(missed))
		exit(1);
	exit(0);
}

/* The CPUs this process may run on (the online ones) into cpus[]; -1 on error. */
static int online_cpus(int *cpus)
{
	cpu_set_t online;
	int c, n = 0;

	if (sched_getaffinity(0, sizeof(online), &online))
		return -1;
	for (c = 0; c < MAX_CPUS; c++)
		if (CPU_ISSET(c, &online))
			cpus[n++] = c;
	return n;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const int64_t *v, int n, double p)
{
	int i = (int)(p / 100.0 * (n - 1) + 0.5);

	return v[i] / 1000.0;
}

static void report(const char *name, const char *who, int64_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp64);
	printf("@@lat %s cpu=%s n=%d p50=%.1f p90=%.1f p99=%.1f max=%.1f\n",
	       name, who, n, pct(v, n, 50), pct(v, n, 90), pct(v, n, 99),
	       v[n - 1] / 1000.0);
}

/* Fork a sleeper() per CPU of cpus[]; fds[]: the pipes they write to. */
static int spawn_sleepers(const int *cpus, int ncpu, const struct run_args *a,
			  int64_t start, int *fds)
{
	int i;

	for (i = 0; i < ncpu; i++) {
		int p[2];

		if (pipe(p))
			return -1;
		if (fork() == 0) {
			close(p[0]);
			sleeper(cpus[i], a, start, p[1]);
		}
		close(p[1]);
		fds[i] = p[0];
	}
	return 0;
}

/* Read exactly n samples from fd into v; 0 on success. */
static int read_samples(int fd, int64_t *v, int n)
{
	ssize_t got = 0, want = (ssize_t)n * sizeof(*v);

	while (got < want) {
		ssize_t r = read(fd, (char *)v + got, want - got);

		if (r <= 0)
			break;
		got += r;
	}
	return got != want;
}

static void print_raw(const char *name, const char *who, const int64_t *v, int n)
{
	int c;

	printf("@@raw %s cpu=%s", name, who);
	for (c = 0; c < n; c++)
		printf("%c%lld", c ? ',' : ' ', (long long)v[c]);
	printf("\n");
}

static int cmd_lat(int argc, char **argv)
{
	int ncpu, cpus[MAX_CPUS], fds[MAX_CPUS], count;
	struct run_args a;
	int64_t *all;
	char who[16];
	int i, nall = 0, failed = 0;

	if (parse_run(argc, argv, &a))
		return 2;
	count = a.count;
	ncpu = online_cpus(cpus);
	if (ncpu <= 0 || spawn_sleepers(cpus, ncpu, &a, 0, fds))
		return 1;

	all = calloc((size_t)count * ncpu, sizeof(*all));
	if (!all)
		return 1;
	for (i = 0; i < ncpu; i++) {
		int64_t *v = all + (size_t)i * count;

		if (read_samples(fds[i], v, count)) {
			printf("@@error lat %s cpu=%d short read\n", argv[2], cpus[i]);
			failed = 1;
			continue;
		}
		snprintf(who, sizeof(who), "%d", cpus[i]);
		print_raw(argv[2], who, v, count);
		report(argv[2], who, v, count);
		nall += count;
	}
	while (wait(NULL) > 0)
		;
	if (!failed) {
		report(argv[2], "all", all, nall);
	}
	fflush(stdout);
	return failed;
}

static int cmd_storm(int argc, char **argv)
{
	int rounds, ncpu, cpus[MAX_CPUS], fds[MAX_CPUS];
	int64_t *all, *last, missed = 0;
	struct run_args a;
	int i, r, failed = 0;
	char who[16];

	if (parse_run(argc, argv, &a))
		return 2;
	rounds = a.count;
	ncpu = online_cpus(cpus);
	if (ncpu <= 0)
		return 1;
	all = calloc((size_t)rounds * ncpu, sizeof(*all));
	last = calloc(rounds, sizeof(*last));
	if (!all || !last)
		return 1;
	/* time for every sleeper to start and pin itself before the first */
	if (spawn_sleepers(cpus, ncpu, &a, now_ns() + 200 * 1000000LL, fds))
		return 1;
	for (i = 0; i < ncpu; i++) {
		int64_t *v = all + (size_t)i * rounds, m;

		if (read_samples(fds[i], v, rounds) || read_samples(fds[i], &m, 1)) {
			printf("@@error storm %s cpu=%d short read\n", argv[2], cpus[i]);
			failed = 1;
			continue;
		}
		missed += m;
		for (r = 0; r < rounds; r++)
			if (!i || v[r] > last[r])
				last[r] = v[r];
	}
	while (wait(NULL) > 0)
		;
	if (failed)
		return 1;
	print_raw(argv[2], "last", last, rounds);
	report(argv[2], "last", last, rounds);
	for (i = 0; i < ncpu; i++) {
		snprintf(who, sizeof(who), "%d", cpus[i]);
		report(argv[2], who, all + (size_t)i * rounds, rounds);
	}
	report(argv[2], "all", all, rounds * ncpu);
	printf("@@storm %s missed=%lld\n", argv[2], (long long)missed);
	fflush(stdout);
	return 0;
}

/* Per sleeper, in memory shared with the parent. */
struct soak_cpu {
	volatile int64_t begun, done, target, worst, suspended;
	volatile int stop;
	int64_t v[];
};

#define SOAK_MAX 400000

static long suspend_gen(void)
{
	char buf[24] = "";
	int fd = open("/tmp/s2idle.gen", O_RDONLY);

	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return strtol(buf, NULL, 10);
}

static void soak_cpu(int cpu, struct soak_cpu *s, int min_us, int max_us, uint64_t seed)
{
	uint64_t rng = seed * 7919 + cpu + 1;
	int n = 0;

	pin_to(cpu);
	while (!s->stop) {
		int64_t delay = (min_us + rng_next(&rng) % (max_us - min_us + 1)) * 1000LL;
		long gen = suspend_gen();
		int64_t target = now_ns() + delay, late;
		struct timespec ts = {
			.tv_sec = target / 1000000000,
			.tv_nsec = target % 1000000000,
		};

		s->target = target;
		__atomic_store_n(&s->begun, s->begun + 1, __ATOMIC_RELEASE);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		late = now_ns() - target;
		if (late > 100000000LL && ((gen & 1) || suspend_gen() != gen)) {
			s->suspended++;
		} else {
			if (n < SOAK_MAX)
				s->v[n++] = late;
			if (late > s->worst)
				s->worst = late;
		}
		__atomic_store_n(&s->done, s->done + 1, __ATOMIC_RELEASE);
	}
	exit(0);
}

static void soak_report(const char *name, const char *who, int64_t begun, int64_t done,
			int stuck, int64_t susp, int64_t *v, int n, int64_t worst)
{
	qsort(v, n, sizeof(*v), cmp64);
	printf("@@soak %s cpu=%s sleeps=%lld wakeups=%lld stuck=%d suspended=%lld p50=%.1f "
	       "p99=%.1f p999=%.1f max=%.1f\n", name, who, (long long)begun, (long long)done,
	       stuck, (long long)susp,
	       n ? pct(v, n, 50) : 0.0, n ? pct(v, n, 99) : 0.0, n ? pct(v, n, 99.9) : 0.0,
	       worst / 1000.0);
}

static int cmd_soak(int argc, char **argv)
{
	int min_us, max_us, hang_s, ncpu = 0, cpus[MAX_CPUS], i, nall = 0, stuck_all = 0;
	size_t size = sizeof(struct soak_cpu) + SOAK_MAX * sizeof(int64_t);
	struct soak_cpu *s[MAX_CPUS];
	int64_t begun_all = 0, done_all = 0, worst_all = 0, susp_all = 0, *all;
	pid_t pids[MAX_CPUS];
	struct stat st;
	char who[16];

	if (argc != 8)
		return 2;
	min_us = atoi(argv[4]);
	max_us = atoi(argv[5]);
	hang_s = atoi(argv[7]);
	if (min_us <= 0 || max_us < min_us || hang_s <= 0)
		return 2;
	ncpu = online_cpus(cpus);
	if (ncpu <= 0)
		return 1;
	for (i = 0; i < ncpu; i++) {
		s[i] = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (s[i] == MAP_FAILED)
			return 1;
		pids[i] = fork();
		if (pids[i] == 0)
			soak_cpu(cpus[i], s[i], min_us, max_us, strtoull(argv[6], NULL, 0));
	}
	while (stat(argv[3], &st))
		usleep(100000);
	for (i = 0; i < ncpu; i++)
		s[i]->stop = 1;

	/* Every sleeper ends its current sleep, or is stuck. */
	all = calloc((size_t)SOAK_MAX * ncpu, sizeof(*all));
	if (!all)
		return 1;
	for (i = 0; i < ncpu; i++) {
		int64_t begun, done, n;
		int stuck = 0;

		for (;;) {
			begun = __atomic_load_n(&s[i]->begun, __ATOMIC_ACQUIRE);
			done = __atomic_load_n(&s[i]->done, __ATOMIC_ACQUIRE);
			if (waitpid(pids[i], NULL, WNOHANG) == pids[i])
				break;
			if (begun != done && now_ns() - s[i]->target > hang_s * 1000000000LL) {
				printf("@@soak %s stuck cpu=%d target=%lld now=%lld\n", argv[2], cpus[i],
				       (long long)s[i]->target, (long long)now_ns());
				kill(pids[i], SIGKILL);
				waitpid(pids[i], NULL, 0);
				stuck = 1;
				break;
			}
			usleep(20000);
		}
		begun = s[i]->begun;
		done = s[i]->done;
		n = done - s[i]->suspended;
		if (n > SOAK_MAX)
			n = SOAK_MAX;
		memcpy(all + nall, s[i]->v, n * sizeof(*all));
		snprintf(who, sizeof(who), "%d", cpus[i]);
		soak_report(argv[2], who, begun, done, stuck, s[i]->suspended, s[i]->v, n,
			    s[i]->worst);
		susp_all += s[i]->suspended;
		begun_all += begun;
		done_all += done;
		stuck_all += stuck;
		if (s[i]->worst > worst_all)
			worst_all = s[i]->worst;
		nall += n;
	}
	soak_report(argv[2], "all", begun_all, done_all, stuck_all, susp_all, all, nall,
		    worst_all);
	fflush(stdout);
	return 0;
}

static int cmd_exit(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	fflush(stdout);
#if defined(__x86_64__) || defined(__i386__)
	if (ioperm(0xf4, 4, 1)) {
		perror("ioperm");
		return 1;
	}
	outl((unsigned int)strtoul(argv[2], NULL, 0), 0xf4);
#endif
	return 1;
}

int main(int argc, char **argv)
{
	int ret = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "lat"))
		ret = cmd_lat(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "storm"))
		ret = cmd_storm(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "soak"))
		ret = cmd_soak(argc, argv);
	else if (argc >= 2 && !strcmp(argv[1], "exit"))
		ret = cmd_exit(argc, argv);
	if (ret == 2)
		fprintf(stderr, "usage: tbprobe lat|storm NAME COUNT MIN_US MAX_US SEED |\n"
			"       soak NAME STOPFILE MIN_US MAX_US SEED HANG_S | exit CODE\n");
	return ret;
}
