/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * Differences between the kernels the subvol target builds against, kept in
 * one place.  The reference kernel is Debian 12's 6.1.
 */
#ifndef DM_SUBVOL_COMPAT_H
#define DM_SUBVOL_COMPAT_H

#include <linux/uio.h>

/* ITER_SOURCE and ITER_DEST arrived in 6.1.11 and 6.2. */
#ifndef ITER_SOURCE
#define ITER_SOURCE	WRITE
#define ITER_DEST	READ
#endif

#endif /* DM_SUBVOL_COMPAT_H */
