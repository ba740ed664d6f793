/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Just enough of the kernel's API, in userspace, to compile pure kernel
 * code (drivers/md/dm-subvol-map.c) into a unit test.  Each <linux/...>
 * header in this directory includes this one.
 */
#ifndef KSHIM_H
#define KSHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef unsigned int gfp_t;
typedef struct { int unused; } spinlock_t;
typedef struct { long counter; } atomic_long_t;
struct kernel_param;
struct kernel_param_ops {
	int (*get)(char *buf, const struct kernel_param *kp);
};

#define PAGE_SIZE		4096UL
#define GFP_KERNEL		0u
#define GFP_NOIO		0u
#define __GFP_NOFAIL		0u
#define BIT(n)			(1UL << (n))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
/* Each argument evaluated once, as the kernel's. */
#define min_t(t, a, b)		({ t __a = (a), __b = (b); __a < __b ? __a : __b; })
#define max_t(t, a, b)		({ t __a = (a), __b = (b); __a > __b ? __a : __b; })
#define min(a, b)		min_t(__typeof__((a) + (b)), a, b)
#define max(a, b)		max_t(__typeof__((a) + (b)), a, b)
#define DIV_ROUND_UP_ULL(n, d)	(((n) + (d) - 1) / (d))
#define ATOMIC_LONG_INIT(v)	{ (v) }
#define WARN_ON_ONCE(c)		({ bool __c = (c); if (__c) kshim_warnings++; __c; })
#define module_param_cb(n, ops, arg, perm)
#define MODULE_PARM_DESC(n, d)

extern int kshim_warnings;
extern long kshim_pages;	/* pages allocated and not freed */

static inline u64 div_u64_rem(u64 n, u32 d, u32 *rem)
{
	*rem = n % d;
	return n / d;
}

static inline void atomic_long_add(long v, atomic_long_t *a) { a->counter += v; }
static inline long atomic_long_read(const atomic_long_t *a) { return a->counter; }
static inline int sysfs_emit(char *buf, const char *fmt, ...) { (void)buf; (void)fmt; return 0; }
static inline void cond_resched(void) { }
static inline void spin_lock(spinlock_t *l) { (void)l; }
static inline void spin_unlock(spinlock_t *l) { (void)l; }

static inline unsigned long __get_free_page(gfp_t gfp)
{
	(void)gfp;
	kshim_pages++;
	return (unsigned long)aligned_alloc(PAGE_SIZE, PAGE_SIZE);
}

static inline void free_page(unsigned long p)
{
	kshim_pages--;
	free((void *)p);
}

static inline void *kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	(void)gfp;
	return calloc(n, size);
}

static inline void kvfree(void *p) { free(p); }

#endif
