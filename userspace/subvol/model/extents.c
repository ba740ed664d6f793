// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Extent maps and the differences between two images (see extents.h).
 */
#include "model/extents.h"

#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define FIEMAP_BATCH	512
#define READ_CHUNK	(1U << 20)

int range_add(struct range_list *l, uint64_t offset, uint64_t length,
	      enum range_kind kind)
{
	struct range *last = l->nr ? &l->r[l->nr - 1] : NULL;
	struct range *grown;

	if (!length)
		return 0;
	/* Adjacent ranges of one kind become one. */
	if (last && last->kind == kind && last->offset + last->length == offset) {
		last->length += length;
		return 0;
	}
	if (l->nr == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		grown = realloc(l->r, l->cap * sizeof(*l->r));
		if (!grown)
			return -1;
		l->r = grown;
	}
	l->r[l->nr++] = (struct range){ offset, length, kind };
	return 0;
}

void range_list_free(struct range_list *l)
{
	free(l->r);
	memset(l, 0, sizeof(*l));
}

static int extent_add(struct extent_map *m, uint64_t logical, uint64_t physical,
		      uint64_t length)
{
	struct extent *last = m->nr ? &m->e[m->nr - 1] : NULL;
	struct extent *grown;

	if (last && last->logical + last->length == logical &&
	    last->physical + last->length == physical) {
		last->length += length;
		return 0;
	}
	if (m->nr == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		grown = realloc(m->e, m->cap * sizeof(*m->e));
		if (!grown)
			return -1;
		m->e = grown;
	}
	m->e[m->nr++] = (struct extent){ logical, physical, length };
	return 0;
}

int extent_map_read(int fd, struct extent_map *m)
{
	size_t sz = sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(sz);
	uint64_t start = 0;
	struct fiemap_extent *fe;
	bool last = false;
	unsigned int i;

	memset(m, 0, sizeof(*m));
	if (!fm)
		return -1;
	while (!last) {
		memset(fm, 0, sz);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm))
			goto fail;
		if (!fm->fm_mapped_extents)
			break;
		for (i = 0; i < fm->fm_mapped_extents; i++) {
			fe = &fm->fm_extents[i];
			if (fe->fe_flags & FIEMAP_EXTENT_LAST)
				last = true;
			start = fe->fe_logical + fe->fe_length;
			if (fe->fe_flags & FIEMAP_EXTENT_UNWRITTEN)
				continue;
			/* No stable physical address: cannot be compared. */
			if (fe->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
					    FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE)) {
				errno = EOPNOTSUPP;
				goto fail;
			}
			if (extent_add(m, fe->fe_logical, fe->fe_physical, fe->fe_length))
				goto fail;
		}
	}
	free(fm);
	return 0;
fail:
	free(fm);
	extent_map_free(m);
	return -1;
}

int extent_usage(int fd, uint64_t *exclusive, uint64_t *shared)
{
	size_t sz = sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(sz);
	struct fiemap_extent *fe;
	uint64_t start = 0;
	bool last = false;
	unsigned int i;

	*exclusive = *shared = 0;
	if (!fm)
		return -1;
	while (!last) {
		memset(fm, 0, sz);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = FIEMAP_BATCH;
		/* No FIEMAP_FLAG_SYNC: list must not flush a running guest's data. */
		if (ioctl(fd, FS_IOC_FIEMAP, fm)) {
			free(fm);
			return -1;
		}
		if (!fm->fm_mapped_extents)
			break;
		for (i = 0; i < fm->fm_mapped_extents; i++) {
			fe = &fm->fm_extents[i];
			if (fe->fe_flags & FIEMAP_EXTENT_LAST)
				last = true;
			start = fe->fe_logical + fe->fe_length;
			if (fe->fe_flags & FIEMAP_EXTENT_SHARED)
				*shared += fe->fe_length;
			else
				*exclusive += fe->fe_length;
		}
	}
	free(fm);
	return 0;
}

void extent_map_free(struct extent_map *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

/*
 * Where a map stands at pos: *data and *phys (the physical address at pos)
 * for the extent holding pos, and the end of that extent or hole.  *i is
 * the walk's cursor; pos only grows.
 */
static uint64_t map_at(const struct extent_map *m, size_t *i, uint64_t pos,
		       uint64_t size, bool *data, uint64_t *phys)
{
	while (*i < m->nr && m->e[*i].logical + m->e[*i].length <= pos)
		(*i)++;
	if (*i < m->nr && m->e[*i].logical <= pos) {
		*data = true;
		*phys = m->e[*i].physical + (pos - m->e[*i].logical);
		return m->e[*i].logical + m->e[*i].length;
	}
	*data = false;
	return *i < m->nr && m->e[*i].logical < size ? m->e[*i].logical : size;
}

int extents_diff(const struct extent_map *old, const struct extent_map *new,
		 uint64_t size, struct range_list *out, uint64_t *shared)
{
	uint64_t pos = 0, end, end_o, end_n, phys_o = 0, phys_n = 0;
	size_t io = 0, in = 0;
	bool data_o, data_n;

	*shared = 0;
	while (pos < size) {
		end_o = map_at(old, &io, pos, size, &data_o, &phys_o);
		end_n = map_at(new, &in, pos, size, &data_n, &phys_n);
		end = end_o < end_n ? end_o : end_n;
		if (end > size)
			end = size;
		if (data_o && data_n && phys_o == phys_n)
			*shared += end - pos;	/* one block, two files */
		else if (data_n && range_add(out, pos, end - pos, RANGE_DATA))
			return -1;
		else if (!data_n && data_o && range_add(out, pos, end - pos, RANGE_HOLE))
			return -1;
		pos = end;
	}
	return 0;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	return !n || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(fd, (char *)buf + got, len - got, off + got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		got += n;
	}
	return got;
}

/* len bytes at off; past the end of a shorter file they read as zeros. */
static int read_padded(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t got = pread_full(fd, buf, len, off);

	if (got < 0)
		return -1;
	memset((char *)buf + got, 0, len - got);
	return 0;
}

int content_diff(int old_fd, int new_fd, uint64_t size, uint32_t block,
		 struct range_list *out)
{
	unsigned char *a = malloc(READ_CHUNK), *b = malloc(READ_CHUNK);
	uint64_t pos, off, n;
	int r = -1;

	if (!a || !b)
		goto out;
	for (pos = 0; pos < size; pos += n) {
		n = size - pos < READ_CHUNK ? size - pos : READ_CHUNK;
		if (read_padded(old_fd, a, n, pos) || read_padded(new_fd, b, n, pos))
			goto out;
		for (off = 0; off < n; off += block) {
			uint64_t len = n - off < block ? n - off : block;

			if (!memcmp(a + off, b + off, len))
				continue;
			if (range_add(out, pos + off, len,
				      all_zero(b + off, len) ? RANGE_HOLE : RANGE_DATA))
				goto out;
		}
	}
	r = 0;
out:
	free(a);
	free(b);
	return r;
}

int extents_full(const struct extent_map *m, uint64_t size,
		 struct range_list *out)
{
	uint64_t pos = 0, end, phys;
	size_t i = 0;
	bool data;

	while (pos < size) {
		end = map_at(m, &i, pos, size, &data, &phys);
		if (end > size)
			end = size;
		if (range_add(out, pos, end - pos, data ? RANGE_DATA : RANGE_HOLE))
			return -1;
		pos = end;
	}
	return 0;
}
