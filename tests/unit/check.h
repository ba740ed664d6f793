/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unit tests' checks: "ok - NAME" or "not ok - NAME (where: what)"
 * per check, counted in passed and failed for the closing line.
 */
#ifndef UNIT_CHECK_H
#define UNIT_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(name, cond) do {						\
	if (cond) {							\
		passed++;						\
		printf("ok - %s\n", name);				\
	} else {							\
		failed++;						\
		printf("not ok - %s (%s:%d: %s)\n", name, __FILE__,	\
		       __LINE__, #cond);				\
	}								\
} while (0)

#endif
