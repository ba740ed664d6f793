/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The send stream, version 1.  All numbers are little-endian.
 *
 *   header   struct stream_header, then hdr.text_len bytes of text:
 *            "key=value" lines (format=1, name, id, base_id, base_name,
 *            then the snapshot's metadata keys: kind, size, guarantee, ...)
 *   records  struct stream_record, each followed by its payload:
 *              DATA  offset, length: length bytes of the image (<= 1 MiB)
 *              HOLE  offset, length: a range that reads as zeros
 *              END   offset 0, length = number of DATA and HOLE records;
 *                    payload: SHA-256 of every byte of the stream before
 *                    this record
 *
 * hdr.crc is the CRC32C of the header (crc field zero) and its text; each
 * record's crc is the CRC32C of the record (crc zero) and its payload.
 * Offsets and lengths are whole blocks of hdr.block_size, in increasing
 * order, within hdr.size.  A full stream (no base_id) covers [0, size)
 * with DATA and HOLE records; an incremental one only what differs from
 * the base.  hdr.data_bytes and hdr.nr_records announce the totals so
 * that a receiver can refuse a stream too big for its pool up front.
 */
#ifndef SUBVOL_STREAM_H
#define SUBVOL_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define STREAM_MAGIC		"SUBVOLSTREAM\r\n\032\n"	/* 16 bytes */
#define STREAM_VERSION		1
#define STREAM_MAX_TEXT		8192
#define STREAM_MAX_DATA		(1U << 20)

enum stream_record_type {
	STREAM_DATA = 1,
	STREAM_HOLE = 2,
	STREAM_END = 3,
};

struct stream_header {
	char magic[16];
	uint32_t version;
	uint32_t crc;
	uint64_t size;		/* bytes of the image */
	uint32_t block_size;
	uint32_t text_len;
	uint64_t data_bytes;	/* payload bytes of all DATA records */
	uint64_t nr_records;	/* DATA and HOLE records */
} __attribute__((packed));

struct stream_record {
	uint32_t type;
	uint32_t crc;
	uint64_t offset;
	uint64_t length;
} __attribute__((packed));

uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

#endif
