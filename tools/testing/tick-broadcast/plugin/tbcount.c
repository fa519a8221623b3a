// SPDX-License-Identifier: GPL-2.0
/*
 * tbcount: a QEMU TCG plugin that counts what the tick broadcast costs,
 * by guest instructions executed, so that the counts are the same on every
 * run under -icount and do not depend on the host.
 *
 *   qemu-system-x86_64 ... -icount shift=0,sleep=off \
 *	-plugin tbcount.so,cfg=FILE,out=FILE
 *
 * The configuration (counts.py writes it from the kernel's System.map)
 * has one item a line, addresses in hex:
 *
 *   arch NAME		x86_64 or arm64: how instructions are decoded
 *   kernel LO HI	instrument only guest code in [LO, HI)
 *   op NAME ADDR	a function whose calls are counted with everything
 *			they execute until they return (an "operation");
 *			an operation called inside another is also one of
 *			its parts: the outer one's scopes count the
 *			instructions executed in it apart (sub:NAME)
 *   part NAME ADDR	an operation counted only where it is called
 *			inside another; a wait for the lock inside it is
 *			the enclosing operation's
 *   lockvar ADDR	the lock: an acquiring store to it (x86: a locked
 *			instruction; arm64: not a store-release) opens a lock
 *			section on that vCPU, a releasing one closes it
 *   wait ADDR		the lock's slow path: what runs in it is waiting,
 *			counted apart (wait scopes), in no operation and no
 *			lock section; if it touched the lock, the lock is
 *			held when it returns
 *   fn NAME ADDR	a function whose entries are counted
 *   mmio NAME LO HI	guest-physical range whose reads and writes are
 *			counted
 *   marker ADDR	each entry of this function ends a phase
 *
 * Every event (instructions of a translation block, a counted function's
 * entry, an access to a counted range) is added to the phase's total, to
 * every operation open on that vCPU and, inside a lock section, to the
 * lock scope of the innermost operation (or of none); while the vCPU
 * waits for the lock, only to the total and the innermost operation's
 * wait scope. At each marker the phase's counts are written to the output
 * file and the counters start again from zero.
 *
 * An operation ends when its function returns: the plugin keeps, per
 * vCPU, the call depth since the operation's entry, from the last
 * instruction of each translation block (a call adds one, a return takes
 * one; retpolines and return thunks balance; a return out of a tail
 * call leaves the caller too). Interrupt entries and exits are neither.
 * Operations are told apart by their call site (the end of the call
 * instruction that reached them), so that, for instance, the enter and
 * the exit call of one function are two rows.
 *
 * A block's instructions are counted when the next block of its vCPU
 * starts, that is once it ran to its end; a block cut short by an
 * exception still counts whole (none is expected in the code counted).
 *
 * The counters take no lock: run it only with -icount, under which TCG
 * runs the vCPUs in turn on one host thread (counts.py does).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The part of QEMU 7.2's plugin API (version 1, include/qemu/qemu-plugin.h,
 * not packaged by Debian) this plugin uses, declared here.
 */
typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;
typedef struct qemu_info_t qemu_info_t;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
					  uint64_t vaddr, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
				      void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);
int qemu_plugin_n_max_vcpus(void);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;

#define MAX_ITEMS	32
#define MAX_SITES	64
#define MAX_VCPUS	256
#define MAX_DEPTH	8

enum last_insn { LAST_OTHER, LAST_CALL, LAST_RET };

/* What the translation of one block leaves for its executions. */
struct block {
	uint64_t vaddr;
	uint64_t end;		/* the address after its last instruction */
	unsigned int n;		/* instructions */
	enum last_insn last;
	int op;			/* an op entry: its index, else -1 */
	int fn;			/* a counted function's entry: its index, else -1 */
	bool wait, marker;
	struct insn_info {
		uint64_t vaddr;
		uint64_t end;
		bool release;	/* a store by it releases a lock */
	} insn[];
};

struct counts {
	uint64_t calls;		/* of a site; lock sections or waits of a scope */
	uint64_t insns;
	uint64_t sub[MAX_ITEMS];	/* insns in an operation called directly inside */
	uint64_t fn[MAX_ITEMS];
	uint64_t rd[MAX_ITEMS], wr[MAX_ITEMS];
};

/* An operation's call site, its lock sections and its waits for the lock. */
struct site {
	int op;
	uint64_t ret;		/* -1: entered other than by a call */
	struct counts c, lock, wait;
};

struct frame {
	int site;		/* the operation's (or, waiting, the innermost operation's) */
	int depth;		/* calls made and not returned from since its entry */
	bool wait;		/* the lock's slow path */
	bool on_lock;		/* waiting: it touched the lock */
};

struct vcpu {
	struct frame stack[MAX_DEPTH];
	int n;			/* open frames */
	int waiting;		/* open wait frames */
	int lock_site;		/* lock section open: its scope (site, or -1 for none) */
	bool locked;
	uint64_t io_end;	/* the end of the instruction of its last device access */
	const struct block *prev;
};

static struct { char name[48]; uint64_t addr; bool part; } ops[MAX_ITEMS], fns[MAX_ITEMS];
static struct { char name[48]; uint64_t lo, hi; } mmio[MAX_ITEMS];
static int n_ops, n_fns, n_mmio;
static uint64_t kernel_lo, kernel_hi = UINT64_MAX, marker = UINT64_MAX, lockvar, wait_fn;
static bool is_arm64;

static struct counts total, nolock, nowait;	/* lock sections and waits outside any op */
static struct site sites[MAX_SITES];
static int n_sites;
static uint64_t overflow;		/* sites or stack entries that did not fit */
static struct vcpu vcpus[MAX_VCPUS];
static unsigned int phase;
static FILE *out;

/* How a block's last instruction changes the call depth. */
static enum last_insn classify(const uint8_t *p, size_t len)
{
	if (is_arm64) {
		uint32_t w;

		if (len != 4)
			return LAST_OTHER;
		memcpy(&w, p, 4);
		if ((w & 0xfc000000) == 0x94000000 ||	/* bl */
		    (w & 0xfffffc1f) == 0xd63f0000)	/* blr */
			return LAST_CALL;
		if ((w & 0xfffffc1f) == 0xd65f0000)	/* ret */
			return LAST_RET;
		return LAST_OTHER;
	}
	/* x86: skip prefixes (operand size, segment, rex, notrack) */
	while (len > 1 && (p[0] == 0x66 || p[0] == 0x2e || p[0] == 0x3e ||
			   (p[0] & 0xf0) == 0x40)) {
		p++;
		len--;
	}
	if (p[0] == 0xe8)
		return LAST_CALL;
	if (p[0] == 0xff && len > 1) {
		unsigned int reg = (p[1] >> 3) & 7;

		if (reg == 2 || reg == 3)
			return LAST_CALL;
	}
	if (p[0] == 0xc3 || p[0] == 0xc2)
		return LAST_RET;
	return LAST_OTHER;
}

/*
 * Whether a store by this instruction releases a lock: on arm64 a
 * store-release (stlr, stlrb, stlrh); on x86 anything but a locked
 * instruction or xchg, which is how a lock is taken.
 */
static bool releases(const uint8_t *p, size_t len)
{
	if (is_arm64) {
		uint32_t w;

		if (len != 4)
			return false;
		memcpy(&w, p, 4);
		return (w & 0x3ffffc00) == 0x089ffc00;
	}
	for (size_t i = 0; i < len; i++) {
		if (p[i] == 0xf0)
			return false;			/* lock prefix */
		if (p[i] != 0x66 && p[i] != 0x2e && p[i] != 0x3e && (p[i] & 0xf0) != 0x40)
			return p[i] != 0x86 && p[i] != 0x87;	/* xchg */
	}
	return true;
}

static int innermost(const struct vcpu *v)
{
	return v->n ? v->stack[v->n - 1].site : -1;
}

/* The innermost operation that is not a part: a wait inside a part is its. */
static int innermost_op(const struct vcpu *v)
{
	for (int i = v->n - 1; i >= 0; i--) {
		int s = v->stack[i].site;

		if (s >= 0 && !v->stack[i].wait && !ops[sites[s].op].part)
			return s;
	}
	return -1;
}

static void each_scope(unsigned int cpu, void (*fn)(struct counts *c, void *arg), void *arg)
{
	struct vcpu *v = &vcpus[cpu];

	fn(&total, arg);
	if (v->waiting) {
		int s = -1;

		for (int i = v->n - 1; i >= 0; i--)
			if (v->stack[i].wait) {
				s = v->stack[i].site;
				break;
			}
		fn(s >= 0 ? &sites[s].wait : &nowait, arg);
		return;
	}
	for (int i = 0; i < v->n; i++)
		if (v->stack[i].site >= 0)
			fn(&sites[v->stack[i].site].c, arg);
	if (v->locked)
		fn(v->lock_site >= 0 ? &sites[v->lock_site].lock : &nolock, arg);
}

static void add_insns_plain(struct counts *c, void *arg)
{
	c->insns += *(unsigned int *)arg;
}

static void add_fn(struct counts *c, void *arg)
{
	c->fn[*(int *)arg]++;
}

static int site_of(int op, uint64_t ret)
{
	for (int i = 0; i < n_sites; i++)
		if (sites[i].op == op && sites[i].ret == ret)
			return i;
	if (n_sites == MAX_SITES) {
		overflow++;
		return -1;
	}
	sites[n_sites].op = op;
	sites[n_sites].ret = ret;
	return n_sites++;
}

/* The operation called directly inside frame i, if any: its index, else -1. */
static int inner_op(const struct vcpu *v, int i)
{
	for (int j = i + 1; j < v->n; j++)
		if (v->stack[j].site >= 0)
			return sites[v->stack[j].site].op;
	return -1;
}

static void add_to(struct counts *c, int sub, unsigned int n)
{
	c->insns += n;
	if (sub >= 0)
		c->sub[sub] += n;
}

/*
 * Like each_scope() for n instructions, which an operation's scopes also
 * count as part of the operation called directly inside it, if any.
 */
static void add_insns(unsigned int cpu, unsigned int n)
{
	struct vcpu *v = &vcpus[cpu];
	int lock_frame = -1;

	if (v->waiting) {
		each_scope(cpu, add_insns_plain, &n);
		return;
	}
	total.insns += n;
	for (int i = 0; i < v->n; i++) {
		if (v->stack[i].site < 0)
			continue;
		add_to(&sites[v->stack[i].site].c, inner_op(v, i), n);
		if (v->stack[i].site == v->lock_site)
			lock_frame = i;
	}
	if (v->locked) {
		if (v->lock_site >= 0)
			add_to(&sites[v->lock_site].lock, lock_frame >= 0 ? inner_op(v, lock_frame) : -1, n);
		else
			nolock.insns += n;
	}
}

static void print_counts(const char *what, const struct counts *c)
{
	fprintf(out, "%s calls=%" PRIu64 " insns=%" PRIu64, what, c->calls, c->insns);
	for (int i = 0; i < n_ops; i++)
		if (c->sub[i])
			fprintf(out, " sub:%s=%" PRIu64, ops[i].name, c->sub[i]);
	for (int i = 0; i < n_fns; i++)
		if (c->fn[i])
			fprintf(out, " fn:%s=%" PRIu64, fns[i].name, c->fn[i]);
	for (int i = 0; i < n_mmio; i++) {
		if (c->rd[i])
			fprintf(out, " rd:%s=%" PRIu64, mmio[i].name, c->rd[i]);
		if (c->wr[i])
			fprintf(out, " wr:%s=%" PRIu64, mmio[i].name, c->wr[i]);
	}
	fputc('\n', out);
}

static void end_phase(void)
{
	static const char *const kind[] = { "op", "lock", "wait" };
	char what[128];
	int open = 0;

	for (int i = 0; i < MAX_VCPUS; i++)
		open += vcpus[i].n;
	fprintf(out, "phase %u overflow=%" PRIu64 " open=%d\n", phase, overflow, open);
	print_counts("total", &total);
	print_counts("lock -", &nolock);
	print_counts("wait -", &nowait);
	for (int i = 0; i < n_sites; i++) {
		const struct counts *c[] = { &sites[i].c, &sites[i].lock, &sites[i].wait };

		for (int k = 0; k < 3; k++) {
			snprintf(what, sizeof(what), "%s %s %#" PRIx64, kind[k],
				 ops[sites[i].op].name, sites[i].ret);
			print_counts(what, c[k]);
		}
		memset(&sites[i].c, 0, sizeof(sites[i].c));
		memset(&sites[i].lock, 0, sizeof(sites[i].lock));
		memset(&sites[i].wait, 0, sizeof(sites[i].wait));
	}
	fprintf(out, "end %u\n", phase);
	fflush(out);
	memset(&total, 0, sizeof(total));
	memset(&nolock, 0, sizeof(nolock));
	memset(&nowait, 0, sizeof(nowait));
	overflow = 0;
	phase++;
}

static void open_lock(struct vcpu *v)
{
	v->locked = true;
	v->lock_site = innermost(v);
	(v->lock_site >= 0 ? &sites[v->lock_site].lock : &nolock)->calls++;
}

static void push(struct vcpu *v, int site, bool wait)
{
	if (v->n == MAX_DEPTH) {
		overflow++;
		return;
	}
	v->stack[v->n] = (struct frame){ .site = site, .wait = wait };
	v->n++;
	v->waiting += wait;
}

/* The frame on top returned. */
static void pop(struct vcpu *v)
{
	struct frame *f = &v->stack[--v->n];

	if (f->wait) {
		v->waiting--;
		if (f->on_lock && !v->locked && !v->waiting)
			open_lock(v);		/* the slow path returns holding it */
	} else if (v->locked && v->lock_site == f->site) {
		v->locked = false;		/* returned holding the lock */
	}
	if (v->n)
		v->stack[v->n - 1].depth--;
}

static void block_exec(unsigned int cpu, void *udata)
{
	const struct block *b = udata;
	const struct block *prev;
	struct vcpu *v;
	bool cut;

	if (cpu >= MAX_VCPUS)
		return;
	v = &vcpus[cpu];
	prev = v->prev;
	v->prev = b;

	/*
	 * Under -icount a block that reaches a device access before its last
	 * instruction is abandoned before the access, and QEMU runs the
	 * instructions up to it in a block of their own, which calls no
	 * plugin back but for the access. The block before then ran only up
	 * to the end of the access: count that, and not its end.
	 */
	cut = prev && v->io_end > prev->vaddr && v->io_end < prev->end;
	/*
	 * QEMU 7.2's x86 translator backs an instruction that crosses into
	 * the next page out of a block it does not start, and translates it
	 * as the first of the next block; the plugin still got the block
	 * with that instruction, half decoded, as its last (fixed in QEMU
	 * 8.2). The next block then starts where that one does: the block
	 * before ended without it, and a "call" there was never made.
	 */
	if (prev && !cut && prev->n > 1 && b->vaddr == prev->insn[prev->n - 1].vaddr) {
		cut = true;
		v->io_end = b->vaddr;
	}
	if (prev) {
		unsigned int n = prev->n;

		if (cut)
			for (n = 0; n < prev->n && prev->insn[n].vaddr < v->io_end; n++)
				;
		add_insns(cpu, n);
	}
	v->io_end = 0;
	if (prev && v->n && !cut) {
		if (prev->last == LAST_CALL) {
			v->stack[v->n - 1].depth++;
		} else if (prev->last == LAST_RET) {
			/*
			 * A return out of a frame is one out of the call that
			 * reached it, made at its parent's level (pop()); after a
			 * tail call it returns out of the parent too.
			 */
			v->stack[v->n - 1].depth--;
			while (v->n && v->stack[v->n - 1].depth < 0)
				pop(v);
		}
	}

	if (b->marker)
		end_phase();

	if (b->op >= 0 && (!ops[b->op].part || innermost(v) >= 0)) {
		uint64_t ret = prev && prev->last == LAST_CALL && !cut ? prev->end : UINT64_MAX;
		int s = site_of(b->op, ret);

		push(v, s, false);
		if (s >= 0)
			sites[s].c.calls++;
	}
	if (b->wait) {
		int s = innermost_op(v);

		push(v, s, true);
		(s >= 0 ? &sites[s].wait : &nowait)->calls++;
	}

	if (b->fn >= 0) {
		int i = b->fn;

		each_scope(cpu, add_fn, &i);
	}
}

struct access {
	int range;
	bool store;
};

static void add_access(struct counts *c, void *arg)
{
	const struct access *a = arg;

	if (a->store)
		c->wr[a->range]++;
	else
		c->rd[a->range]++;
}

static void mem_access(unsigned int cpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	const struct insn_info *insn = udata;
	struct qemu_plugin_hwaddr *hw;
	struct vcpu *v;
	uint64_t pa;

	if (cpu >= MAX_VCPUS)
		return;
	v = &vcpus[cpu];
	if (lockvar && vaddr >= lockvar && vaddr < lockvar + 4) {
		if (v->waiting) {
			v->stack[v->n - 1].on_lock |= v->stack[v->n - 1].wait;
		} else if (qemu_plugin_mem_is_store(info)) {
			if (insn->release)
				v->locked = false;
			else if (!v->locked)
				open_lock(v);
		}
		return;
	}
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || !qemu_plugin_hwaddr_is_io(hw))
		return;
	v->io_end = insn->end;
	pa = qemu_plugin_hwaddr_phys_addr(hw);
	for (int i = 0; i < n_mmio; i++) {
		if (pa >= mmio[i].lo && pa < mmio[i].hi) {
			struct access a = { i, qemu_plugin_mem_is_store(info) };

			each_scope(cpu, add_access, &a);
			return;
		}
	}
}

static void block_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t va = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct qemu_plugin_insn *last;
	struct block *b;

	(void)id;
	if (va < kernel_lo || va >= kernel_hi || !n)
		return;
	b = calloc(1, sizeof(*b) + n * sizeof(b->insn[0]));	/* lives as long as its translation */
	if (!b)
		abort();
	last = qemu_plugin_tb_get_insn(tb, n - 1);
	b->vaddr = va;
	b->n = n;
	b->end = qemu_plugin_insn_vaddr(last) + qemu_plugin_insn_size(last);
	b->last = classify(qemu_plugin_insn_data(last), qemu_plugin_insn_size(last));
	b->op = b->fn = -1;
	for (int i = 0; i < n_ops; i++)
		if (ops[i].addr == va)
			b->op = i;
	for (int i = 0; i < n_fns; i++)
		if (fns[i].addr == va)
			b->fn = i;
	b->wait = va == wait_fn;
	b->marker = va == marker;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, b);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		size_t len = qemu_plugin_insn_size(insn);

		b->insn[i].vaddr = qemu_plugin_insn_vaddr(insn);
		b->insn[i].end = b->insn[i].vaddr + len;
		b->insn[i].release = releases(qemu_plugin_insn_data(insn), len);
		qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, &b->insn[i]);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	end_phase();
	fclose(out);
}

static int read_config(const char *path)
{
	char line[256], kind[16], name[48];
	uint64_t a, b;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "kernel %" SCNx64 " %" SCNx64, &a, &b) == 2) {
			kernel_lo = a;
			kernel_hi = b;
		} else if (sscanf(line, "%15s %47s %" SCNx64, kind, name, &a) == 3 &&
			   (!strcmp(kind, "op") || !strcmp(kind, "part")) && n_ops < MAX_ITEMS) {
			strcpy(ops[n_ops].name, name);
			ops[n_ops].part = !strcmp(kind, "part");
			ops[n_ops++].addr = a;
		} else if (sscanf(line, "fn %47s %" SCNx64, name, &a) == 2 && n_fns < MAX_ITEMS) {
			strcpy(fns[n_fns].name, name);
			fns[n_fns++].addr = a;
		} else if (sscanf(line, "mmio %47s %" SCNx64 " %" SCNx64, name, &a, &b) == 3 &&
			   n_mmio < MAX_ITEMS) {
			strcpy(mmio[n_mmio].name, name);
			mmio[n_mmio].lo = a;
			mmio[n_mmio++].hi = b;
		} else if (sscanf(line, "lockvar %" SCNx64, &a) == 1) {
			lockvar = a;
		} else if (sscanf(line, "wait %" SCNx64, &a) == 1) {
			wait_fn = a;
		} else if (sscanf(line, "marker %" SCNx64, &a) == 1) {
			marker = a;
		} else if (sscanf(line, "arch %15s", kind) == 1) {
			is_arm64 = !strcmp(kind, "arm64");
		} else if (line[0] != '#' && line[0] != '\n') {
			fprintf(stderr, "tbcount: %s: not understood (or too many): %s", path, line);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	const char *cfg = NULL, *outp = NULL;

	(void)info;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "cfg=", 4))
			cfg = argv[i] + 4;
		else if (!strncmp(argv[i], "out=", 4))
			outp = argv[i] + 4;
	}
	if (!cfg || !outp || read_config(cfg)) {
		fprintf(stderr, "tbcount: want cfg=FILE,out=FILE (a readable cfg)\n");
		return -1;
	}
	if (qemu_plugin_n_max_vcpus() > MAX_VCPUS) {
		fprintf(stderr, "tbcount: at most %d vCPUs\n", MAX_VCPUS);
		return -1;
	}
	out = fopen(outp, "w");
	if (!out)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
