// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The block map: one of three states per block (hole, exclusive,
 * shared), in groups of SUBVOL_MAP_GROUP_BLOCKS blocks.  A group whose
 * blocks are all in one state keeps just that state; the others have a
 * leaf, a page holding the states five to a byte (3^5 = 243 fits).  An
 * empty or sequentially written volume costs its group array, 24 bytes
 * per 80 MiB (4 KiB blocks): 0.3 MiB per TiB; a randomly written one a
 * page per group besides, 51.5 MiB per TiB at most.  Leaves come and go
 * as groups split and become uniform again.
 *
 * A volume's map covers its whole backing file, not only the part its
 * table maps: the file's blocks past the table hold host space and may be
 * shared, and the pool's reserve counts them; a reload that grows the
 * table then needs no scan.  Beyond the table, an untouched group costs
 * its 24 bytes: a 1 GiB table over a 16 TiB sparse file, 4.8 MiB.
 *
 * The caller's lock protects the map.  Moves run under it, so the leaves
 * a split takes are allocated before, in a stash (a move splits at most
 * the groups at the two ends of its range; the groups in between either
 * change state as a whole or already have a leaf).
 */

#include "dm-subvol-map.h"

#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#define SUBVOL_MAP_GROUP_BLOCKS	(5 * PAGE_SIZE)
#define SUBVOL_MAP_STATES	3

struct subvol_map_group {
	u8 *leaf;			/* NULL: every block in @state */
	u32 count[SUBVOL_MAP_STATES];	/* with a leaf: blocks per state */
	u8 state;
};

static const u8 subvol_pow3[5] = { 1, 3, 9, 27, 81 };
/* A byte whose five blocks are all in state s is s * 121. */
#define SUBVOL_MAP_BYTE(s)	((s) * 121)

/* What all block maps take, for the map_bytes parameter. */
static atomic_long_t subvol_map_total = ATOMIC_LONG_INIT(0);

static int subvol_map_total_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&subvol_map_total));
}

static const struct kernel_param_ops subvol_map_total_ops = {
	.get = subvol_map_total_get,
};

module_param_cb(map_bytes, &subvol_map_total_ops, NULL, 0444);
MODULE_PARM_DESC(map_bytes, "Memory the block maps of all volumes take, in bytes");

static void subvol_map_account(struct subvol_map *map, long bytes)
{
	map->bytes += bytes;
	atomic_long_add(bytes, &subvol_map_total);
}

static u64 subvol_map_group_len(const struct subvol_map *map, u64 g)
{
	return min_t(u64, SUBVOL_MAP_GROUP_BLOCKS,
		     map->nr_blocks - g * SUBVOL_MAP_GROUP_BLOCKS);
}

static unsigned int subvol_leaf_get(const u8 *leaf, u32 i)
{
	return leaf[i / 5] / subvol_pow3[i % 5] % 3;
}

static void subvol_leaf_set(u8 *leaf, u32 i, unsigned int old,
			    unsigned int new)
{
	leaf[i / 5] = leaf[i / 5] - old * subvol_pow3[i % 5] +
		      new * subvol_pow3[i % 5];
}

/*
 *----------------------------------------------------------------
 * Leaves
 *----------------------------------------------------------------
 */

/*
 * Order-0 pages: the I/O path cannot fail a write for want of one, and a
 * page this small is what the allocator never fails for long (NOIO: the
 * device may be the one reclaim writes to).
 */
void subvol_map_stash_fill(struct subvol_map_stash *stash)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(stash->leaf); i++)
		if (!stash->leaf[i])
			stash->leaf[i] = (u8 *)__get_free_page(GFP_NOIO |
							       __GFP_NOFAIL);
}

void subvol_map_stash_drain(struct subvol_map_stash *stash)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(stash->leaf); i++) {
		if (stash->leaf[i])
			free_page((unsigned long)stash->leaf[i]);
		stash->leaf[i] = NULL;
	}
}

/*
 * Whether a group would split for a move of [@off, @end) of it from a
 * state in @from_mask: a uniform group in such a state, not covered whole.
 */
static bool subvol_group_would_split(const struct subvol_map *map, u64 g,
				     u32 off, u32 end, unsigned int from_mask)
{
	const struct subvol_map_group *grp = &map->groups[g];

	return !grp->leaf && (from_mask & BIT(grp->state)) &&
	       !(!off && end == subvol_map_group_len(map, g));
}

/*
 * Whether moves of [@block, @block + @nr) from the states in @from_mask
 * may split more groups than @stash has leaves for.  Under the lock.
 */
bool subvol_map_needs_leaves(const struct subvol_map *map, u64 block, u64 nr,
			     unsigned int from_mask,
			     const struct subvol_map_stash *stash)
{
	unsigned int need = 0, have = 0, i;
	u64 first, last;
	u32 off, end;

	if (block >= map->nr_blocks || !nr)
		return false;
	nr = min(nr, map->nr_blocks - block);
	first = div_u64_rem(block, SUBVOL_MAP_GROUP_BLOCKS, &off);
	last = div_u64_rem(block + nr - 1, SUBVOL_MAP_GROUP_BLOCKS, &end);
	need += subvol_group_would_split(map, first, off,
					 first == last ? end + 1 :
					 subvol_map_group_len(map, first),
					 from_mask);
	if (last != first)
		need += subvol_group_would_split(map, last, 0, end + 1,
						 from_mask);
	for (i = 0; i < ARRAY_SIZE(stash->leaf); i++)
		have += !!stash->leaf[i];
	return need > have;
}

static u8 *subvol_stash_take(struct subvol_map_stash *stash)
{
	unsigned int i;
	u8 *leaf;

	for (i = 0; i < ARRAY_SIZE(stash->leaf); i++) {
		leaf = stash->leaf[i];
		if (leaf) {
			stash->leaf[i] = NULL;
			return leaf;
		}
	}
	return NULL;
}

/* A leaf no longer needed goes back to the stash, or is freed. */
static void subvol_stash_put(struct subvol_map_stash *stash, u8 *leaf)
{
	unsigned int i;

	for (i = 0; stash && i < ARRAY_SIZE(stash->leaf); i++) {
		if (!stash->leaf[i]) {
			stash->leaf[i] = leaf;
			return;
		}
	}
	free_page((unsigned long)leaf);
}

/* A uniform group of @len blocks gets a leaf; false if the stash is empty. */
static bool subvol_group_split(struct subvol_map *map,
			       struct subvol_map_group *grp, u64 len,
			       struct subvol_map_stash *stash)
{
	u8 *leaf = subvol_stash_take(stash);

	if (WARN_ON_ONCE(!leaf))
		return false;
	memset(leaf, SUBVOL_MAP_BYTE(grp->state), PAGE_SIZE);
	memset(grp->count, 0, sizeof(grp->count));
	grp->count[grp->state] = len;
	grp->leaf = leaf;
	subvol_map_account(map, PAGE_SIZE);
	return true;
}

/* A group whose blocks all came to one state drops its leaf. */
static void subvol_group_collapse(struct subvol_map *map,
				  struct subvol_map_group *grp, u64 len,
				  struct subvol_map_stash *stash)
{
	unsigned int s;

	for (s = 0; s < SUBVOL_MAP_STATES; s++) {
		if (grp->count[s] == len) {
			subvol_stash_put(stash, grp->leaf);
			grp->leaf = NULL;
			grp->state = s;
			subvol_map_account(map, -(long)PAGE_SIZE);
			return;
		}
	}
}

/*
 *----------------------------------------------------------------
 * The map
 *----------------------------------------------------------------
 */

/* Every block a hole. */
int subvol_map_init(struct subvol_map *map, u64 nr_blocks)
{
	u64 nr_groups = DIV_ROUND_UP_ULL(nr_blocks, SUBVOL_MAP_GROUP_BLOCKS);

	memset(map, 0, sizeof(*map));
	map->groups = kvcalloc(max_t(u64, nr_groups, 1), sizeof(*map->groups),
			       GFP_KERNEL);
	if (!map->groups)
		return -ENOMEM;
	map->nr_blocks = nr_blocks;
	map->nr_groups = nr_groups;
	subvol_map_account(map, max_t(u64, nr_groups, 1) *
				sizeof(*map->groups));
	return 0;
}

void subvol_map_free(struct subvol_map *map)
{
	u64 g;

	if (!map->groups)
		return;
	for (g = 0; g < map->nr_groups; g++) {
		if (map->groups[g].leaf)
			free_page((unsigned long)map->groups[g].leaf);
		if (!(g & 1023))
			cond_resched();
	}
	kvfree(map->groups);
	subvol_map_account(map, -(long)map->bytes);
	map->groups = NULL;
}

/*
 * Grow to @nr_blocks, the new blocks holes; @lock is the map's, the
 * caller keeps every whole-map walk out.  Sleeps.
 */
int subvol_map_grow(struct subvol_map *map, u64 nr_blocks, spinlock_t *lock)
{
	u64 nr_groups = DIV_ROUND_UP_ULL(nr_blocks, SUBVOL_MAP_GROUP_BLOCKS);
	struct subvol_map_stash stash = { };
	struct subvol_map_group *groups, *old, *last;
	u64 old_len, new_len, old_groups;
	u32 i;

	if (nr_blocks <= map->nr_blocks)
		return 0;
	groups = kvcalloc(nr_groups, sizeof(*groups), GFP_KERNEL);
	if (!groups)
		return -ENOMEM;
	subvol_map_stash_fill(&stash);

	spin_lock(lock);
	old = map->groups;
	old_groups = map->nr_groups;
	memcpy(groups, old, old_groups * sizeof(*groups));
	old_len = map->nr_blocks % SUBVOL_MAP_GROUP_BLOCKS;
	map->groups = groups;
	map->nr_blocks = nr_blocks;
	map->nr_groups = nr_groups;
	/* The old last group, if partial, grows by holes. */
	if (old_len) {
		last = &groups[old_groups - 1];
		new_len = subvol_map_group_len(map, old_groups - 1);
		if (!last->leaf && last->state != SUBVOL_HOLE &&
		    new_len > old_len)
			subvol_group_split(map, last, old_len, &stash);
		if (last->leaf) {
			for (i = old_len; i < new_len; i++)
				subvol_leaf_set(last->leaf, i,
						subvol_leaf_get(last->leaf, i),
						SUBVOL_HOLE);
			last->count[SUBVOL_HOLE] += new_len - old_len;
		}
	}
	subvol_map_account(map, (long)(max_t(u64, nr_groups, 1) -
				       max_t(u64, old_groups, 1)) *
				sizeof(*groups));
	spin_unlock(lock);

	kvfree(old);
	subvol_map_stash_drain(&stash);
	return 0;
}

/* Blocks of [@block, @block + @nr) in @state, within the map. */
u64 subvol_map_count(const struct subvol_map *map, u64 block, u64 nr,
		     unsigned int state)
{
	u64 n = 0;

	if (block >= map->nr_blocks)
		return 0;
	nr = min(nr, map->nr_blocks - block);
	while (nr) {
		u32 off;
		u64 g = div_u64_rem(block, SUBVOL_MAP_GROUP_BLOCKS, &off);
		const struct subvol_map_group *grp = &map->groups[g];
		u64 len = subvol_map_group_len(map, g);
		u32 i, end = min_t(u64, len, off + nr);

		if (!grp->leaf) {
			n += grp->state == state ? end - off : 0;
		} else if (!off && end == len) {
			n += grp->count[state];
		} else {
			for (i = off; i < end; i++) {
				if (!(i % 5) && i + 5 <= end &&
				    grp->leaf[i / 5] == SUBVOL_MAP_BYTE(state)) {
					n += 5;
					i += 4;
					continue;
				}
				n += subvol_leaf_get(grp->leaf, i) == state;
			}
		}
		block += end - off;
		nr -= end - off;
	}
	return n;
}

/*
 * Move the blocks of [@block, @block + @nr) in state @from to @to; how
 * many moved.  A split takes its leaf from @stash, a collapse gives it
 * back.
 */
u64 subvol_map_move(struct subvol_map *map, u64 block, u64 nr,
		    unsigned int from, unsigned int to,
		    struct subvol_map_stash *stash)
{
	u64 moved = 0;

	if (block >= map->nr_blocks || from == to)
		return 0;
	nr = min(nr, map->nr_blocks - block);
	while (nr) {
		u32 off;
		u64 g = div_u64_rem(block, SUBVOL_MAP_GROUP_BLOCKS, &off);
		struct subvol_map_group *grp = &map->groups[g];
		u64 len = subvol_map_group_len(map, g);
		u32 i, m = 0, end = min_t(u64, len, off + nr);

		block += end - off;
		nr -= end - off;
		if (!grp->leaf) {
			if (grp->state != from)
				continue;
			if (!off && end == len) {
				grp->state = to;
				moved += len;
				continue;
			}
			if (!subvol_group_split(map, grp, len, stash))
				continue;
		}
		for (i = off; i < end; i++) {
			if (!(i % 5) && i + 5 <= end &&
			    grp->leaf[i / 5] == SUBVOL_MAP_BYTE(from)) {
				grp->leaf[i / 5] = SUBVOL_MAP_BYTE(to);
				m += 5;
				i += 4;
				continue;
			}
			if (subvol_leaf_get(grp->leaf, i) == from) {
				subvol_leaf_set(grp->leaf, i, from, to);
				m++;
			}
		}
		grp->count[from] -= m;
		grp->count[to] += m;
		moved += m;
		subvol_group_collapse(map, grp, len, stash);
	}
	return moved;
}

/*
 * The run of blocks from @block on in one state (set in *@state), up to
 * @end: where it ends.
 */
u64 subvol_map_run(const struct subvol_map *map, u64 block, u64 end,
		   unsigned int *state)
{
	bool first = true;

	end = min(end, map->nr_blocks);
	while (block < end) {
		u32 off;
		u64 g = div_u64_rem(block, SUBVOL_MAP_GROUP_BLOCKS, &off);
		const struct subvol_map_group *grp = &map->groups[g];
		u64 len = subvol_map_group_len(map, g);
		u32 i, stop = min_t(u64, len, off + (end - block));

		if (!grp->leaf) {
			if (first)
				*state = grp->state;
			else if (grp->state != *state)
				return block;
			first = false;
			block += stop - off;
			continue;
		}
		for (i = off; i < stop; i++) {
			unsigned int s;

			if (!first && !(i % 5) && i + 5 <= stop &&
			    grp->leaf[i / 5] == SUBVOL_MAP_BYTE(*state)) {
				i += 4;
				continue;
			}
			s = subvol_leaf_get(grp->leaf, i);
			if (first)
				*state = s;
			else if (s != *state)
				return block + (i - off);
			first = false;
		}
		block += stop - off;
	}
	return end;
}
