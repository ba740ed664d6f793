// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The sharing record: which blocks of a volume's backing file are shared
 * or allocated-but-unwritten, kept in an extended attribute of the file,
 * for an activation that cannot read the host's extent map (see
 * dm-subvol-space.c).
 */

#include "dm-subvol.h"
#include "dm-subvol-compat.h"
#include "dm-subvol-space.h"

#include <linux/file.h>
#include <linux/mount.h>
#include <linux/slab.h>
#include <linux/xattr.h>

/*
 *----------------------------------------------------------------
 * The sharing record
 *----------------------------------------------------------------
 */

#define SUBVOL_RECORD_XATTR	"trusted.dm-subvol.shared"
#define SUBVOL_RECORD_MAGIC	0x53565348	/* "SVSH" */
#define SUBVOL_RECORD_VERSION	2
/* An extended attribute value holds at most 64 KiB on XFS. */
#define SUBVOL_RECORD_MAX_RANGES	4000
/* In a range's length: blocks allocated that the host reports as holes. */
#define SUBVOL_RECORD_ALLOCATED	BIT_ULL(63)

/*
 * Which blocks may be shared, and which are allocated although SEEK_DATA
 * calls them holes: ranges in blocks.  @ino and @generation tell a copied
 * record (cp -a copies extended attributes) from our own; @layout is the
 * host's layout hash when the record was written.
 */
struct subvol_record {
	__le32 magic;
	__le32 version;
	__le32 block_size;
	__le32 nr_ranges;
	__le64 ino;
	__le32 generation;
	__le32 pad;
	__le64 layout;
	struct {
		__le64 start;
		__le64 len;
	} ranges[];
};

struct subvol_record_builder {
	struct subvol_record *rec;
	u32 nr;
	bool overflow;
};

static void subvol_record_add(struct subvol_record_builder *b, u64 start,
			      u64 len, u64 flags)
{
	if (b->nr == SUBVOL_RECORD_MAX_RANGES / 2) {
		b->overflow = true;
		return;
	}
	b->rec->ranges[b->nr].start = cpu_to_le64(start);
	b->rec->ranges[b->nr].len = cpu_to_le64(len | flags);
	b->nr++;
}

/* In a host hole, the runs of blocks the map has as allocated. */
static void subvol_record_allocated(struct subvol_space *space, loff_t hole,
				    loff_t data, loff_t data_end, void *priv)
{
	struct subvol_record_builder *b = priv;
	u64 block = hole >> space->block_shift;
	u64 end = data >> space->block_shift;
	u64 run = 0, next;
	unsigned int state;

	for (; block < end; block = next) {
		next = subvol_map_run(&space->map, block, end, &state);
		if (state != SUBVOL_HOLE) {
			run += next - block;
			continue;
		}
		if (run)
			subvol_record_add(b, block - run, run,
					  SUBVOL_RECORD_ALLOCATED);
		run = 0;
		cond_resched();
	}
	if (run)
		subvol_record_add(b, end - run, run, SUBVOL_RECORD_ALLOCATED);
}

/*
 * Add the blocks in state SUBVOL_SHARED, from @first on; a range may
 * cover more blocks than it must, so
 * that the record fits.
 */
static void subvol_record_shared(struct subvol_space *space,
				 struct subvol_record *rec, u32 first)
{
	unsigned int group_shift;
	u32 nr = first;

	/* Coarser groups until the ranges fit. */
	for (group_shift = 0; group_shift < 64; group_shift++) {
		bool open = false;
		u64 block, next;

		nr = first;
		for (block = 0; block < space->nr_blocks; block = next) {
			unsigned int s;
			u64 start, prev;

			next = subvol_map_run(&space->map, block,
					      space->nr_blocks, &s);
			cond_resched();
			if (s != SUBVOL_SHARED)
				continue;
			start = block >> group_shift << group_shift;
			prev = open ? le64_to_cpu(rec->ranges[nr - 1].start) : 0;
			if (open && prev + le64_to_cpu(rec->ranges[nr - 1].len) >=
				    start) {
				rec->ranges[nr - 1].len = cpu_to_le64(next - prev);
				continue;
			}
			if (nr == SUBVOL_RECORD_MAX_RANGES)
				break;
			rec->ranges[nr].start = cpu_to_le64(start);
			rec->ranges[nr].len = cpu_to_le64(next - start);
			nr++;
			open = true;
		}
		if (block == space->nr_blocks)
			break;
	}
	rec->nr_ranges = cpu_to_le32(nr);
}

/*
 * Build the record.  Too many allocated runs are left out: they then
 * count as holes, which claims more, never less.  Caller holds no lock:
 * the device is suspended or being torn down.  Sleeps.
 */
static struct subvol_record *subvol_record_build(struct subvol_space *space,
						 size_t *size)
{
	struct inode *inode = file_inode(space->file);
	struct subvol_record_builder b = { };
	u64 hash = SUBVOL_FNV_OFFSET;
	int r;

	b.rec = kvzalloc(struct_size(b.rec, ranges, SUBVOL_RECORD_MAX_RANGES),
			 GFP_KERNEL);
	if (!b.rec)
		return ERR_PTR(-ENOMEM);

	r = subvol_layout_walk(space, 0,
			       (loff_t)space->nr_blocks << space->block_shift,
			       &hash, subvol_record_allocated, &b);
	if (r) {
		kvfree(b.rec);
		return ERR_PTR(r);
	}
	if (b.overflow)
		b.nr = 0;
	subvol_record_shared(space, b.rec, b.nr);

	b.rec->magic = cpu_to_le32(SUBVOL_RECORD_MAGIC);
	b.rec->version = cpu_to_le32(SUBVOL_RECORD_VERSION);
	b.rec->block_size = cpu_to_le32(1U << space->block_shift);
	b.rec->ino = cpu_to_le64(inode->i_ino);
	b.rec->generation = cpu_to_le32(inode->i_generation);
	b.rec->layout = cpu_to_le64(hash);
	*size = struct_size(b.rec, ranges, le32_to_cpu(b.rec->nr_ranges));
	return b.rec;
}

int subvol_record_write(struct subvol_space *space)
{
	struct subvol_record *rec;
	size_t size;
	int r;

	/*
	 * A sealed snapshot (the tool sets FS_IMMUTABLE_FL) takes no xattr;
	 * it never changes, and activation reads its sharing from the host.
	 */
	if (IS_IMMUTABLE(file_inode(space->file)))
		return 0;
	rec = subvol_record_build(space, &size);
	if (IS_ERR(rec))
		return PTR_ERR(rec);
	r = mnt_want_write_file(space->file);
	if (!r) {
		r = vfs_setxattr(subvol_file_idmap(space->file),
				 space->file->f_path.dentry,
				 SUBVOL_RECORD_XATTR, rec, size, 0);
		mnt_drop_write_file(space->file);
	}
	kvfree(rec);
	return r;
}

/*
 * Before a snapshot shares anything: the record would count too little
 * sharing after a crash, so it goes, and until the volume goes away
 * (subvol_record_write()) a table that cannot read the extent map counts
 * every data block as shared.  Removing it takes a constant time, as the
 * suspend it runs in should; writing one walks the whole extent map.
 */
int subvol_record_drop(struct subvol_space *space)
{
	int r;

	if (IS_IMMUTABLE(file_inode(space->file)))
		return 0;
	r = mnt_want_write_file(space->file);
	if (r)
		return r;
	r = vfs_removexattr(subvol_file_idmap(space->file),
			    space->file->f_path.dentry, SUBVOL_RECORD_XATTR);
	mnt_drop_write_file(space->file);
	return r == -ENODATA ? 0 : r;
}

/* Apply a valid record's ranges: allocated ones first, then shared. */
static void subvol_record_ranges(struct subvol_space *space,
				 const struct subvol_record *rec, u32 nr)
{
	struct subvol_map_stash stash = { };
	u32 i;

	for (i = 0; i < nr; i++) {
		u64 len = le64_to_cpu(rec->ranges[i].len);
		u64 start = le64_to_cpu(rec->ranges[i].start);
		u64 n = subvol_map_clamp(space, start,
					 len & ~SUBVOL_RECORD_ALLOCATED);

		subvol_space_lock_map(space, start, n,
				      (len & SUBVOL_RECORD_ALLOCATED) ?
				      BIT(SUBVOL_HOLE) : BIT(SUBVOL_EXCLUSIVE),
				      &stash);
		if (len & SUBVOL_RECORD_ALLOCATED)
			space->backed += subvol_map_move(&space->map, start, n,
							 SUBVOL_HOLE,
							 SUBVOL_EXCLUSIVE, &stash);
		else
			space->shared += subvol_map_move(&space->map, start, n,
							 SUBVOL_EXCLUSIVE,
							 SUBVOL_SHARED, &stash);
		subvol_space_unlock_map(space, &stash);
	}
}

/*
 * Use the record if it is ours and the host's layout is still the one it
 * was written for (@layout); otherwise count every data block as shared.
 * Nothing else uses the map yet.
 */
void subvol_record_apply(struct subvol_space *space, u64 layout)
{
	struct inode *inode = file_inode(space->file);
	size_t max = struct_size_t(struct subvol_record, ranges,
				   SUBVOL_RECORD_MAX_RANGES);
	struct subvol_record *rec;
	const char *why = NULL;
	ssize_t len;
	u32 nr;

	rec = kvmalloc(max, GFP_KERNEL);
	if (!rec) {
		why = "no memory to read it";
		goto all;
	}
	len = vfs_getxattr(subvol_file_idmap(space->file),
			   space->file->f_path.dentry, SUBVOL_RECORD_XATTR,
			   rec, max);
	if (len < 0) {
		why = len == -ENODATA ? "none" : "unreadable";
		goto all;
	}
	nr = len >= sizeof(*rec) ? le32_to_cpu(rec->nr_ranges) : 0;
	if (len < sizeof(*rec) ||
	    le32_to_cpu(rec->magic) != SUBVOL_RECORD_MAGIC ||
	    le32_to_cpu(rec->version) != SUBVOL_RECORD_VERSION ||
	    le32_to_cpu(rec->block_size) != 1U << space->block_shift ||
	    nr > SUBVOL_RECORD_MAX_RANGES ||
	    len != struct_size(rec, ranges, nr)) {
		why = "not valid";
		goto all;
	}
	if (le64_to_cpu(rec->ino) != inode->i_ino ||
	    le32_to_cpu(rec->generation) != inode->i_generation) {
		why = "copied from another file";
		goto all;
	}
	if (le64_to_cpu(rec->layout) != layout) {
		why = "the file changed since it was written";
		goto all;
	}
	subvol_record_ranges(space, rec, nr);
	kvfree(rec);
	return;

all:
	kvfree(rec);
	subvol_map_move_all(space, 0, space->nr_blocks, SUBVOL_EXCLUSIVE,
			    SUBVOL_SHARED, &space->shared);
	if (space->shared)
		DMINFO("%s: sharing record of %pD: %s; counting all %llu data blocks as shared",
		       dm_device_name(space->md), space->file, why,
		       (unsigned long long)space->shared);
}
