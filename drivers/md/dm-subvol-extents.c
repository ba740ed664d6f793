// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The host's extent map of a backing file, as FIEMAP reports it: which
 * ranges are allocated, unwritten or shared with another file.  Sharing is
 * the host's own knowledge (XFS reads its refcount btree), so a volume's
 * copy-on-write reserve follows it exactly, whoever cloned the file.
 *
 * ->fiemap fills a buffer in user memory (fiemap_fill_next_extent() copies
 * with copy_to_user()), and the kernel has no other interface to a file's
 * sharing.  The walk therefore maps a small anonymous buffer into the
 * calling process for its duration, the buffer a FIEMAP ioctl's caller
 * would have passed: table loads and messages run in the process that
 * issued the device-mapper ioctl.  Without a user address space (a kernel
 * thread, dm-mod.create= at boot) the walk fails with -EOPNOTSUPP and the
 * caller falls back to what it knew before.
 */

#include "dm-subvol.h"

#include <linux/err.h>
#include <linux/fiemap.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

/* Extents per ->fiemap call: 14 KiB of buffer. */
#define SUBVOL_FIEMAP_BATCH	256

/*
 * Call @fn for each extent the host reports in [@start, @end), in order,
 * after writing back the file's dirty pages (so that no extent is still a
 * delayed allocation).  Process context, not a kernel thread.  Sleeps.
 */
int subvol_extents_walk(struct file *file, loff_t start, loff_t end,
			void (*fn)(void *priv, const struct fiemap_extent *fe),
			void *priv)
{
	const size_t size = SUBVOL_FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct inode *inode = file_inode(file);
	u32 flags = FIEMAP_FLAG_SYNC;
	struct fiemap_extent *fe;
	unsigned long ubuf;
	int r = 0;

	if (!inode->i_op->fiemap || !current->mm ||
	    (current->flags & PF_KTHREAD))
		return -EOPNOTSUPP;

	fe = kvmalloc(size, GFP_KERNEL);
	if (!fe)
		return -ENOMEM;
	ubuf = vm_mmap(NULL, 0, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, 0);
	if (IS_ERR_VALUE(ubuf)) {
		r = (int)ubuf;
		goto out;
	}

	while (start < end) {
		struct fiemap_extent_info fi = {
			.fi_flags = flags,
			.fi_extents_max = SUBVOL_FIEMAP_BATCH,
			.fi_extents_start = (struct fiemap_extent __user *)ubuf,
		};
		unsigned int i, n;
		loff_t next;

		r = inode->i_op->fiemap(inode, &fi, start, end - start);
		if (r)
			break;
		n = fi.fi_extents_mapped;
		if (!n)
			break;
		if (copy_from_user(fe, (const void __user *)ubuf,
				   n * sizeof(*fe))) {
			r = -EFAULT;
			break;
		}
		for (i = 0; i < n; i++)
			fn(priv, &fe[i]);
		next = fe[n - 1].fe_logical + fe[n - 1].fe_length;
		/* A host that does not advance would loop for ever. */
		if ((fe[n - 1].fe_flags & FIEMAP_EXTENT_LAST) || next <= start)
			break;
		start = next;
		flags = 0;	/* written back once is enough */
		cond_resched();
	}
	vm_munmap(ubuf, size);
out:
	kvfree(fe);
	return r;
}
