// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The registry of space providers: which disks can reserve backing space
 * for the filesystem on them.  See include/linux/blk-space.h.
 */

#include <linux/blk-space.h>
#include <linux/module.h>
#include <linux/spinlock.h>

/*
 * Providers register and unregister from process context; lookups happen
 * at mount.  A spinlock is plenty, and lets a lookup take the provider's
 * references before the provider can go away.
 */
static DEFINE_SPINLOCK(blk_space_lock);
static LIST_HEAD(blk_space_providers);

/*
 * Off, a filesystem mounted meanwhile finds no provider, as on any other
 * device: what reserving through the API costs is measured against that,
 * on the same device and in the same boot (scripts/bench-space).
 */
static bool lookups = true;
module_param(lookups, bool, 0644);
MODULE_PARM_DESC(lookups, "Let filesystems find their device's provider at mount (default on)");

int blk_space_register(struct blk_space *space, dev_t dev,
		       const struct blk_space_ops *ops)
{
	struct blk_space *other;
	int r = 0;

	space->ops = ops;
	space->dev = dev;
	spin_lock(&blk_space_lock);
	list_for_each_entry(other, &blk_space_providers, list) {
		if (other->dev == dev) {
			r = -EBUSY;
			goto out;
		}
	}
	list_add(&space->list, &blk_space_providers);
out:
	spin_unlock(&blk_space_lock);
	return r;
}
EXPORT_SYMBOL_GPL(blk_space_register);

/* Clients that already have @space keep it until they put it. */
void blk_space_unregister(struct blk_space *space)
{
	spin_lock(&blk_space_lock);
	list_del_init(&space->list);
	spin_unlock(&blk_space_lock);
}
EXPORT_SYMBOL_GPL(blk_space_unregister);

/*
 * The provider of @bdev's disk, with a reference, or NULL if none.
 * Clients call it through blk_space_get(), which binds to this module at
 * run time (include/linux/blk-space.h).
 */
struct blk_space *blk_space_lookup(struct block_device *bdev)
{
	dev_t dev = disk_devt(bdev->bd_disk);
	struct blk_space *space;

	if (!READ_ONCE(lookups))
		return NULL;
	spin_lock(&blk_space_lock);
	list_for_each_entry(space, &blk_space_providers, list) {
		if (space->dev != dev)
			continue;
		if (!try_module_get(space->ops->owner))
			break;
		/* Its last reference may be gone, its unregister to come. */
		if (!space->ops->get(space)) {
			module_put(space->ops->owner);
			break;
		}
		spin_unlock(&blk_space_lock);
		return space;
	}
	spin_unlock(&blk_space_lock);
	return NULL;
}
EXPORT_SYMBOL_GPL(blk_space_lookup);

void blk_space_drop(struct blk_space *space)
{
	struct module *owner = space->ops->owner;

	space->ops->put(space);
	module_put(owner);
}
EXPORT_SYMBOL_GPL(blk_space_drop);

MODULE_DESCRIPTION("Registry of block devices that reserve backing space");
MODULE_AUTHOR("The dm-subvol authors");
MODULE_LICENSE("GPL");
