/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The block map of a volume: the state of each block of the backing file
 * (enum subvol_block_state), in groups of SUBVOL_MAP_GROUP_BLOCKS.
 */
#ifndef DM_SUBVOL_MAP_H
#define DM_SUBVOL_MAP_H

#include <linux/spinlock.h>
#include <linux/types.h>

/* The states of a block of a volume. */
enum subvol_block_state {
	SUBVOL_HOLE = 0,	/* not allocated on the host */
	SUBVOL_EXCLUSIVE,	/* allocated, only this file maps it */
	SUBVOL_SHARED,		/* allocated, shared with another file */
};

struct subvol_map_group;

struct subvol_map {
	struct subvol_map_group *groups;
	u64 nr_blocks;
	u64 nr_groups;
	unsigned long bytes;		/* memory the map takes */
};

/*
 * Leaves for a move, taken before the lock: a move splits at most the two
 * groups at the ends of its range, whatever its length.
 */
struct subvol_map_stash {
	u8 *leaf[2];
};

int subvol_map_init(struct subvol_map *map, u64 nr_blocks);
void subvol_map_free(struct subvol_map *map);
int subvol_map_grow(struct subvol_map *map, u64 nr_blocks, spinlock_t *lock);

void subvol_map_stash_fill(struct subvol_map_stash *stash);
void subvol_map_stash_drain(struct subvol_map_stash *stash);

/* Under the lock that protects the map. */
bool subvol_map_needs_leaves(const struct subvol_map *map, u64 block, u64 nr,
			     unsigned int from_mask,
			     const struct subvol_map_stash *stash);
u64 subvol_map_count(const struct subvol_map *map, u64 block, u64 nr,
		     unsigned int state);
u64 subvol_map_move(struct subvol_map *map, u64 block, u64 nr,
		    unsigned int from, unsigned int to,
		    struct subvol_map_stash *stash);
u64 subvol_map_run(const struct subvol_map *map, u64 block, u64 end,
		   unsigned int *state);

#endif
