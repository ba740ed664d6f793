// SPDX-License-Identifier: GPL-2.0-only
/*
 * SUBVOL_HAVE_BLK_OPEN_WRITE: a table's mode is a blk_mode_t of
 * BLK_OPEN_* bits, not an fmode_t (v6.5, 05bdb9965305 "block: replace
 * fmode_t with a block-specific type for block open flags").
 */
#include <linux/blkdev.h>
#include <linux/device-mapper.h>

blk_mode_t subvol_compat_test(struct dm_table *t);
blk_mode_t subvol_compat_test(struct dm_table *t)
{
	return dm_table_get_mode(t) & BLK_OPEN_WRITE;
}
