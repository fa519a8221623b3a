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
 *   kernel LO HI	instrument only guest code in [LO, HI)
 *   text LO HI		the broadcast's own code: a lock call from here
 *			opens a lock section
 *   op NAME ADDR	a function whose calls are counted with everything
 *			they execute until they return (an "operation")
 *   lock ADDR		a lock function: called from text, it opens a
 *			lock section on that vCPU
 *   unlock ADDR	an unlock function: called from text, it closes it
 *   lockvar ADDR	the lock's address, where the kernel inlines its lock
 *			functions (arm64): a store to it from text opens a
 *			lock section, the next one closes it
 *   fn NAME ADDR	a function whose entries are counted
 *   mmio NAME LO HI	guest-physical range whose reads and writes are
 *			counted
 *   marker ADDR	each entry of this function ends a phase
 *
 * Every event (instructions of a translation block, a counted function's
 * entry, an access to a counted range) is added to the phase's total, to
 * every operation open on that vCPU and, inside a lock section, to the
 * lock scope of the innermost operation (or of none). At each marker the
 * phase's counts are written to the output file and the counters start
 * again from zero.
 *
 * An operation ends when its function returns: the plugin keeps, per
 * vCPU, the call depth since the operation's entry, from the last
 * instruction of each translation block (a call adds one, a return takes
 * one; retpolines and return thunks balance). Interrupt entries and exits
 * are neither. Operations are told apart by their call site (the end of
 * the call instruction that reached them), so that, for instance, the
 * enter and the exit call of one function are two rows.
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
#define MAX_TEXT	256
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
	bool in_text;		/* its last instruction is in the broadcast's text */
	int op;			/* an op entry: its index, else -1 */
	int fn;			/* a counted function's entry: its index, else -1 */
	bool lock, unlock, marker;
	struct insn_info {
		uint64_t vaddr;
		uint64_t end;
		bool in_text;
	} insn[];
};

struct counts {
	uint64_t calls;		/* of a site; lock sections of a lock scope */
	uint64_t insns;
	uint64_t fn[MAX_ITEMS];
	uint64_t rd[MAX_ITEMS], wr[MAX_ITEMS];
};

/* An operation's call site and the lock sections opened under it. */
struct site {
	int op;
	uint64_t ret;		/* -1: entered other than by a call */
	struct counts c, lock;
};

struct frame {
	int site;
	int depth;		/* calls made and not returned from since its entry */
};

struct vcpu {
	struct frame stack[MAX_DEPTH];
	int n;			/* open operations */
	int lock_site;		/* lock section open: its scope (site, or -1 for none) */
	bool locked;
	const struct block *prev;
};

static struct { char name[48]; uint64_t addr; } ops[MAX_ITEMS], fns[MAX_ITEMS];
static struct { char name[48]; uint64_t lo, hi; } mmio[MAX_ITEMS];
static int n_ops, n_fns, n_mmio;
static uint64_t locks[MAX_ITEMS], unlocks[MAX_ITEMS];
static int n_locks, n_unlocks;
static uint64_t text_lo[MAX_TEXT], text_hi[MAX_TEXT];
static int n_text;
static uint64_t kernel_lo, kernel_hi = UINT64_MAX, marker = UINT64_MAX, lockvar;
static bool is_arm64;

static struct counts total, nolock;	/* nolock: lock sections outside any op */
static struct site sites[MAX_SITES];
static int n_sites;
static uint64_t overflow;		/* sites or stack entries that did not fit */
static struct vcpu vcpus[MAX_VCPUS];
static unsigned int phase;
static uint64_t io_end;		/* the end of the instruction of the last device access */
static FILE *out;

static bool in_text(uint64_t a)
{
	for (int i = 0; i < n_text; i++)
		if (a >= text_lo[i] && a < text_hi[i])
			return true;
	return false;
}

static bool among(const uint64_t *v, int n, uint64_t a)
{
	for (int i = 0; i < n; i++)
		if (v[i] == a)
			return true;
	return false;
}

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

static void each_scope(unsigned int cpu, void (*fn)(struct counts *c, void *arg), void *arg)
{
	struct vcpu *v = &vcpus[cpu];

	fn(&total, arg);
	for (int i = 0; i < v->n; i++)
		if (v->stack[i].site >= 0)
			fn(&sites[v->stack[i].site].c, arg);
	if (v->locked)
		fn(v->lock_site >= 0 ? &sites[v->lock_site].lock : &nolock, arg);
}

static void add_insns(struct counts *c, void *arg)
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

static void print_counts(const char *what, const struct counts *c)
{
	fprintf(out, "%s calls=%" PRIu64 " insns=%" PRIu64, what, c->calls, c->insns);
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
	char what[128];

	fprintf(out, "phase %u overflow=%" PRIu64 "\n", phase, overflow);
	print_counts("total", &total);
	print_counts("lock -", &nolock);
	for (int i = 0; i < n_sites; i++) {
		snprintf(what, sizeof(what), "op %s %#" PRIx64, ops[sites[i].op].name, sites[i].ret);
		print_counts(what, &sites[i].c);
		snprintf(what, sizeof(what), "lock %s %#" PRIx64, ops[sites[i].op].name, sites[i].ret);
		print_counts(what, &sites[i].lock);
	}
	fprintf(out, "end %u\n", phase);
	fflush(out);
	memset(&total, 0, sizeof(total));
	memset(&nolock, 0, sizeof(nolock));
	for (int i = 0; i < n_sites; i++) {
		memset(&sites[i].c, 0, sizeof(sites[i].c));
		memset(&sites[i].lock, 0, sizeof(sites[i].lock));
	}
	overflow = 0;
	phase++;
}

static void open_lock(struct vcpu *v)
{
	v->locked = true;
	v->lock_site = v->n ? v->stack[v->n - 1].site : -1;
	(v->lock_site >= 0 ? &sites[v->lock_site].lock : &nolock)->calls++;
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
	 * plugin back but for the access; this block then starts right after
	 * the access, inside the one before. The one before ran only up to
	 * here: count that, and not its end.
	 */
	cut = prev && io_end == b->vaddr && b->vaddr > prev->vaddr && b->vaddr < prev->end;
	io_end = 0;
	if (prev) {
		unsigned int n = prev->n;

		if (cut)
			for (n = 0; n < prev->n && prev->insn[n].vaddr < b->vaddr; n++)
				;
		each_scope(cpu, add_insns, &n);
	}
	if (prev && v->n && !cut) {
		if (prev->last == LAST_CALL) {
			v->stack[v->n - 1].depth++;
		} else if (prev->last == LAST_RET) {
			/*
			 * A return out of an operation is one out of the call
			 * that reached it, made at its parent's level; after a
			 * tail call it returns out of the parent too.
			 */
			v->stack[v->n - 1].depth--;
			while (v->n && v->stack[v->n - 1].depth < 0) {
				struct frame *f = &v->stack[--v->n];

				if (v->locked && v->lock_site == f->site)
					v->locked = false;	/* returned holding the lock */
				if (v->n)
					v->stack[v->n - 1].depth--;
			}
		}
	}

	if (b->marker)
		end_phase();

	if (b->op >= 0) {
		uint64_t ret = prev && prev->last == LAST_CALL ? prev->end : UINT64_MAX;
		int s = site_of(b->op, ret);

		if (v->n < MAX_DEPTH) {
			v->stack[v->n].site = s;
			v->stack[v->n].depth = 0;
			v->n++;
			if (s >= 0)
				sites[s].c.calls++;
		} else {
			overflow++;
		}
	}

	if (prev && prev->last == LAST_CALL && prev->in_text) {
		if (b->lock && !v->locked) {
			open_lock(v);
		} else if (b->unlock) {
			v->locked = false;
		}
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
	uint64_t pa;

	if (cpu >= MAX_VCPUS)
		return;
	if (lockvar && vaddr == lockvar && insn->in_text && qemu_plugin_mem_is_store(info)) {
		struct vcpu *v = &vcpus[cpu];

		if (v->locked)
			v->locked = false;
		else
			open_lock(v);
		return;
	}
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || !qemu_plugin_hwaddr_is_io(hw))
		return;
	io_end = insn->end;
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
	b->in_text = in_text(qemu_plugin_insn_vaddr(last));
	b->op = b->fn = -1;
	for (int i = 0; i < n_ops; i++)
		if (ops[i].addr == va)
			b->op = i;
	for (int i = 0; i < n_fns; i++)
		if (fns[i].addr == va)
			b->fn = i;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		b->insn[i].vaddr = qemu_plugin_insn_vaddr(insn);
		b->insn[i].end = b->insn[i].vaddr + qemu_plugin_insn_size(insn);
		b->insn[i].in_text = in_text(b->insn[i].vaddr);
	}
	b->lock = among(locks, n_locks, va);
	b->unlock = among(unlocks, n_unlocks, va);
	b->marker = va == marker;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, b);
	for (size_t i = 0; i < n; i++)
		qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i), mem_access,
						 QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, &b->insn[i]);
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
		} else if (sscanf(line, "text %" SCNx64 " %" SCNx64, &a, &b) == 2 &&
			   n_text < MAX_TEXT) {
			text_lo[n_text] = a;
			text_hi[n_text++] = b;
		} else if (sscanf(line, "op %47s %" SCNx64, name, &a) == 2 && n_ops < MAX_ITEMS) {
			strcpy(ops[n_ops].name, name);
			ops[n_ops++].addr = a;
		} else if (sscanf(line, "fn %47s %" SCNx64, name, &a) == 2 && n_fns < MAX_ITEMS) {
			strcpy(fns[n_fns].name, name);
			fns[n_fns++].addr = a;
		} else if (sscanf(line, "mmio %47s %" SCNx64 " %" SCNx64, name, &a, &b) == 3 &&
			   n_mmio < MAX_ITEMS) {
			strcpy(mmio[n_mmio].name, name);
			mmio[n_mmio].lo = a;
			mmio[n_mmio++].hi = b;
		} else if (sscanf(line, "lock %" SCNx64, &a) == 1 && n_locks < MAX_ITEMS) {
			locks[n_locks++] = a;
		} else if (sscanf(line, "unlock %" SCNx64, &a) == 1 && n_unlocks < MAX_ITEMS) {
			unlocks[n_unlocks++] = a;
		} else if (sscanf(line, "lockvar %" SCNx64, &a) == 1) {
			lockvar = a;
		} else if (sscanf(line, "marker %" SCNx64, &a) == 1) {
			marker = a;
		} else if (sscanf(line, "arch %15s", kind) == 1) {
			is_arm64 = !strcmp(kind, "arm64");
		} else if (line[0] != '#' && line[0] != '\n') {
			fprintf(stderr, "tbcount: %s: cannot read: %s", path, line);
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
