/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What differs between two images, from their extent maps (FIEMAP): a
 * range both map to the same physical blocks is shared by reflink, so
 * unchanged, without reading it.  Images that share nothing are compared
 * by content instead.
 */
#ifndef SUBVOL_EXTENTS_H
#define SUBVOL_EXTENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum range_kind { RANGE_DATA, RANGE_HOLE };

struct range {
	uint64_t offset, length;	/* bytes */
	enum range_kind kind;		/* what the newer image has there */
};

struct range_list {
	struct range *r;
	size_t nr, cap;
};

/* Written extents; unwritten ones read as zeros, so they count as holes. */
struct extent {
	uint64_t logical, physical, length;
};

struct extent_map {
	struct extent *e;
	size_t nr, cap;
};

int range_add(struct range_list *l, uint64_t offset, uint64_t length,
	      enum range_kind kind);
void range_list_free(struct range_list *l);

/* The written extents of fd, after writing back its dirty pages. */
int extent_map_read(int fd, struct extent_map *m);
void extent_map_free(struct extent_map *m);

/*
 * The ranges of [0, size) where new differs from old, by extents.
 * shared: bytes both map to the same physical blocks (0 when the images
 * are not reflink-related, and the result is then only "everything").
 */
int extents_diff(const struct extent_map *old, const struct extent_map *new,
		 uint64_t size, struct range_list *out, uint64_t *shared);

/*
 * The ranges of [0, size) where the content of new differs from old's,
 * in blocks of block bytes, by reading both; a differing block that reads
 * as zeros in new is a hole.
 */
int content_diff(int old_fd, int new_fd, uint64_t size, uint32_t block,
		 struct range_list *out);

/* Up to len bytes at off: fewer only at the end of the file; -1 on error. */
ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off);

/*
 * The host space of fd's extents that no other file shares (what removing
 * it alone frees: btrfs's "exclusive", zfs's USED of a snapshot) and that
 * some other file shares (FIEMAP_EXTENT_SHARED); unwritten and delayed
 * extents are the file's own.  Without writing back dirty pages.
 */
int extent_usage(int fd, uint64_t *exclusive, uint64_t *shared);

/* Every range of [0, size): the data extents, and holes between. */
int extents_full(const struct extent_map *m, uint64_t size,
		 struct range_list *out);

#endif
