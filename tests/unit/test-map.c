// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of the target's block map (drivers/md/dm-subvol-map.c),
 * compiled in userspace with tests/unit/kshim: random moves, counts, runs
 * and growth checked against a plain array of states, and the memory the
 * map takes (a page for each group that is not uniform, none otherwise).
 */
#include "../../drivers/md/dm-subvol-map.c"
#include "check.h"

int kshim_warnings;
long kshim_pages;


#define G SUBVOL_MAP_GROUP_BLOCKS

static u8 *model;

static u64 rnd(u64 n)
{
	return n ? ((u64)random() << 31 ^ (u64)random()) % n : 0;
}

/* A range biased to group edges and whole groups, where the map splits. */
static void pick(u64 nr_blocks, u64 *block, u64 *nr)
{
	switch (rnd(4)) {
	case 0:
		*block = rnd(nr_blocks);
		*nr = 1 + rnd(min_t(u64, 64, nr_blocks - *block));
		break;
	case 1:
		*block = rnd(nr_blocks / G + 1) * G;
		if (*block >= nr_blocks)
			*block = 0;
		*nr = min_t(u64, G * (1 + rnd(2)), nr_blocks - *block);
		break;
	case 2:
		*block = rnd(nr_blocks);
		*nr = 1 + rnd(nr_blocks - *block);
		break;
	default:
		*block = rnd(nr_blocks / G + 1) * G;
		*block = *block > 3 ? *block - 3 : 0;
		if (*block >= nr_blocks)
			*block = nr_blocks - 1;
		*nr = 1 + rnd(min_t(u64, 7, nr_blocks - *block));
	}
}

/* Pages the map should hold: one per group not uniform in the model. */
static u64 model_leaves(u64 nr_blocks)
{
	u64 g, i, leaves = 0;

	for (g = 0; g * G < nr_blocks; g++) {
		for (i = g * G + 1; i < min_t(u64, (g + 1) * G, nr_blocks); i++) {
			if (model[i] != model[g * G]) {
				leaves++;
				break;
			}
		}
	}
	return leaves;
}

static int run_random(u64 nr_blocks, unsigned int ops, unsigned int seed)
{
	struct subvol_map map;
	spinlock_t lock;
	u64 i, block, nr, n, want, bad = 0;
	unsigned int op, from, to, state, k;

	srandom(seed);
	model = calloc(nr_blocks * 4, 1);
	if (subvol_map_init(&map, nr_blocks))
		return -1;
	for (k = 0; k < ops; k++) {
		op = rnd(10);
		if (op == 9 && nr_blocks < 4 * G) {
			/* Grow by holes, sometimes within the last group. */
			u64 more = 1 + rnd(G + 10);

			if (subvol_map_grow(&map, nr_blocks + more, &lock))
				return -1;
			nr_blocks += more;
			continue;
		}
		pick(nr_blocks, &block, &nr);
		if (op < 5) {
			struct subvol_map_stash stash = { };

			from = rnd(3);
			to = rnd(3);
			if (subvol_map_needs_leaves(&map, block, nr, BIT(from), &stash))
				subvol_map_stash_fill(&stash);
			n = subvol_map_move(&map, block, nr, from, to, &stash);
			subvol_map_stash_drain(&stash);
			for (want = 0, i = block; from != to && i < block + nr; i++) {
				if (model[i] == from) {
					model[i] = to;
					want++;
				}
			}
			if (n != want && !bad)
				printf("# move %llu+%llu %u->%u: %llu, want %llu\n",
				       (unsigned long long)block, (unsigned long long)nr, from, to,
				       (unsigned long long)n, (unsigned long long)want);
			bad += n != want;
		} else if (op < 7) {
			state = rnd(3);
			n = subvol_map_count(&map, block, nr, state);
			for (want = 0, i = block; i < block + nr; i++)
				want += model[i] == state;
			if (n != want && !bad)
				printf("# count %llu+%llu %u: %llu, want %llu\n",
				       (unsigned long long)block, (unsigned long long)nr, state,
				       (unsigned long long)n, (unsigned long long)want);
			bad += n != want;
		} else {
			n = subvol_map_run(&map, block, block + nr, &state);
			for (i = block; i < block + nr && model[i] == model[block]; i++)
				;
			if ((n != i || state != model[block]) && !bad)
				printf("# run %llu..%llu: %llu state %u, want %llu state %u\n",
				       (unsigned long long)block, (unsigned long long)(block + nr),
				       (unsigned long long)n, state, (unsigned long long)i, model[block]);
			bad += n != i || state != model[block];
		}
	}
	CHECK("random moves, counts and runs agree with a plain array", !bad);
	for (bad = 0, i = 0; i < nr_blocks; i++)
		bad += subvol_map_count(&map, i, 1, model[i]) != 1;
	CHECK("every block has the model's state at the end", !bad);
	CHECK("a page for each group that is not uniform, no more",
	      (u64)kshim_pages == model_leaves(nr_blocks));
	CHECK("the map's bytes are its group array and its leaves",
	      map.bytes == map.nr_groups * sizeof(*map.groups) + kshim_pages * PAGE_SIZE);
	CHECK("no warning (a split always found its page)", !kshim_warnings);
	subvol_map_free(&map);
	CHECK("freed: no page left, no bytes counted",
	      !kshim_pages && !atomic_long_read(&subvol_map_total));
	free(model);
	return 0;
}

static void test_memory(void)
{
	/* A TiB of 4 KiB blocks. */
	u64 nr_blocks = 1ULL << 28, b, n, last = 0;
	struct subvol_map_stash stash = { };
	struct subvol_map map;
	char name[128];

	CHECK("a TiB map", !subvol_map_init(&map, nr_blocks));
	snprintf(name, sizeof(name), "empty: %lu KiB per TiB (goal <= 8 MiB)", map.bytes >> 10);
	CHECK(name, map.bytes <= 8 << 20);
	/* Sequential writes of 1 MiB: groups split while filled, then not. */
	for (b = 0; b < nr_blocks / 4; b += 256) {
		if (subvol_map_needs_leaves(&map, b, 256, BIT(SUBVOL_HOLE), &stash))
			subvol_map_stash_fill(&stash);
		subvol_map_move(&map, b, 256, SUBVOL_HOLE, SUBVOL_EXCLUSIVE, &stash);
		n = (map.bytes - map.nr_groups * sizeof(*map.groups)) / PAGE_SIZE;
		last = n > last ? n : last;
	}
	subvol_map_stash_drain(&stash);
	snprintf(name, sizeof(name), "a quarter written sequentially: %lu KiB per TiB, at most %llu leaves at once",
		 map.bytes >> 10, (unsigned long long)last);
	CHECK(name, map.bytes <= 8 << 20 && last <= 1);
	/* One block in every group: the worst case. */
	for (b = 5; b < nr_blocks; b += G) {
		if (subvol_map_needs_leaves(&map, b, 1, BIT(SUBVOL_HOLE) | BIT(SUBVOL_EXCLUSIVE), &stash))
			subvol_map_stash_fill(&stash);
		subvol_map_move(&map, b, 1, SUBVOL_HOLE, SUBVOL_SHARED, &stash);
		subvol_map_move(&map, b, 1, SUBVOL_EXCLUSIVE, SUBVOL_SHARED, &stash);
	}
	subvol_map_stash_drain(&stash);
	snprintf(name, sizeof(name), "every group split: %lu KiB per TiB (goal <= 64 MiB)", map.bytes >> 10);
	CHECK(name, map.bytes <= 64 << 20);
	subvol_map_free(&map);
}

int main(void)
{
	unsigned int seed;

	for (seed = 1; seed <= 8; seed++)
		if (run_random(seed & 1 ? 3 * G + 1234 : 2 * G, 4000, seed))
			CHECK("allocation", 0);
	test_memory();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
