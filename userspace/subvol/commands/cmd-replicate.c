// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * diff, send and receive: what changed between two snapshots, found from
 * their extent maps (extents.c), as a stream (stream.h) that another pool
 * turns back into the same snapshot.
 *
 * receive builds the new image as an unnamed file (a clone of its copy
 * of the base, or empty), checks every record and the whole stream, and
 * only then gives it its name: a corrupt, cut or refused stream leaves
 * nothing.
 */
#include "commands/commands.h"
#include "model/extents.h"
#include "model/stream.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define SHA256_LEN 32

struct counts {
	uint64_t stream_bytes, data_bytes, data_records, hole_records, hole_bytes;
	double start;
	const char *method;
};

/* --- progress and summary on stderr */

struct progress {
	bool on;
	const char *what, *action;
	uint64_t total;
	double last;
};

static void progress_init(struct progress *p, const char *what, const char *action,
			  uint64_t total, bool quiet)
{
	p->on = !quiet && isatty(STDERR_FILENO);
	p->what = what;
	p->action = action;
	p->total = total;
	p->last = 0;
}

static void progress_show(struct progress *p, uint64_t done, bool final)
{
	double now;

	if (!p->on)
		return;
	now = now_seconds();
	if (!final && now - p->last < 0.5)
		return;
	p->last = now;
	progress_line(p->what, p->action, done, p->total, final);
}

/*
 * The same keys for send and receive: "stream" is full or incremental;
 * "method" is how send found the ranges (extents, content, full), null
 * for receive, which cannot know.
 */
static void summary(const char *cmd, const char *snap, const char *base,
		    const struct counts *c)
{
	fprintf(stderr,
		"{\"command\": \"%s\", \"snapshot\": \"%s\", \"base\": %s%s%s, "
		"\"stream\": \"%s\", \"method\": %s%s%s, \"stream_bytes\": %" PRIu64
		", \"data_bytes\": %" PRIu64 ", \"data_ranges\": %" PRIu64
		", \"hole_ranges\": %" PRIu64 ", \"hole_bytes\": %" PRIu64 ", \"seconds\": %.3f}\n",
		cmd, snap, base ? "\"" : "", base ? base : "null", base ? "\"" : "",
		base ? "incremental" : "full", c->method ? "\"" : "",
		c->method ? c->method : "null", c->method ? "\"" : "", c->stream_bytes,
		c->data_bytes, c->data_records, c->hole_records, c->hole_bytes,
		now_seconds() - c->start);
}

/* --- the ranges to send */

static int open_snapshot(const char *cmd, struct volume *v, bool need_snapshot)
{
	int fd;

	if (need_snapshot && v->meta.kind != VOLUME_KIND_SNAPSHOT) {
		errmsg("%s: %s/%s is a volume, not a snapshot: it may change while read (subvol snapshot %s/%s NAME first)",
		       cmd, v->pool->meta.name, v->name, v->pool->meta.name, v->name);
		return -1;
	}
	fd = open(v->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		errmsg("%s: cannot open %s: %s", cmd, v->path, strerror(errno));
	return fd;
}

/* A note on stderr, prefixed as errors are: "subvol: diff: ...". */
static void note(const char *cmd, const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "%s: %s: ", progname, cmd);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

/*
 * The ranges where new differs from old (old_fd < 0: everything, data
 * and holes).  c->method says how they were found.  Extent maps tell
 * "unchanged" only of two images on one filesystem: elsewhere the same
 * physical block numbers are different blocks, so the content decides.
 */
static int ranges_of(const char *cmd, int old_fd, int new_fd, const char *old_name,
		     const char *new_name, uint64_t size, uint32_t block,
		     struct range_list *out, struct counts *c)
{
	struct extent_map mo = { 0 }, mn = { 0 };
	struct stat so, sn;
	uint64_t shared = 0;
	int r = -1;

	if (old_fd < 0) {
		c->method = "full";
		if (extent_map_read(new_fd, &mn)) {
			errmsg("%s: %s: cannot read the extent map: %s", cmd, new_name, strerror(errno));
			goto out;
		}
		r = extents_full(&mn, size, out);
		goto out;
	}
	if (fstat(old_fd, &so) || fstat(new_fd, &sn)) {
		errmsg("%s: cannot stat the images: %s", cmd, strerror(errno));
		goto out;
	}
	if (so.st_dev != sn.st_dev) {
		note(cmd, "%s and %s are on different filesystems: comparing their content",
		     old_name, new_name);
		c->method = "content";
		r = content_diff(old_fd, new_fd, size, block, out);
		goto out;
	}
	if (extent_map_read(new_fd, &mn) || extent_map_read(old_fd, &mo)) {
		errmsg("%s: cannot read the extent map: %s", cmd, strerror(errno));
		goto out;
	}
	c->method = "extents";
	r = extents_diff(&mo, &mn, size, out, &shared);
	if (!r && !shared && mo.nr && mn.nr) {
		note(cmd, "%s and %s share no extents now: comparing their content",
		     old_name, new_name);
		range_list_free(out);
		c->method = "content";
		r = content_diff(old_fd, new_fd, size, block, out);
	}
out:
	if (r && !errno)
		errno = ENOMEM;
	extent_map_free(&mo);
	extent_map_free(&mn);
	return r;
}

/*
 * The base of an incremental stream must be the very snapshot the other
 * side holds: sealed (seal.c) and not changed since.
 */
static int base_trusted(const char *cmd, struct volume *base)
{
	char why[256];
	int fd, r;

	fd = open(base->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errmsg("%s: base %s/%s: cannot open %s: %s", cmd, base->pool->meta.name,
		       base->name, base->path, strerror(errno));
		return -1;
	}
	r = image_check_seal(base->pool, fd, base->meta.id, why, sizeof(why));
	close(fd);
	if (r)
		errmsg("%s: base %s/%s cannot be trusted: %s; send a full stream (no --from)",
		       cmd, base->pool->meta.name, base->name, why);
	return r;
}

/* The second volume of diff/send --from: in the first one's pool, or a spec. */
static int other_volume(struct volume *first, const char *arg, struct pool *pool,
			struct volume *v)
{
	if (!strchr(arg, '/'))
		return volume_load(first->pool, arg, v, true);
	return volume_spec(arg, pool, v, false, true);
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct pool pa, pb = { .dirfd = -1 };
	struct range_list l = { 0 };
	struct counts c = { 0 };
	char an[2 * SUBVOL_NAME_MAX + 2], bn[2 * SUBVOL_NAME_MAX + 2];
	struct volume a, b;
	bool json = false;
	int fa = -1, fb = -1, ch, r = EXIT_REFUSED;
	uint64_t bytes = 0;
	size_t i;

	while ((ch = cmd_getopt(argc, argv, "Jh", opts)) != -1) {
		if (ch == 'J')
			json = true;
		else if (ch == 'h')
			return command_help("diff");
		else
			return usage_error("diff", NULL);
	}
	if (optind != argc - 2)
		return usage_error("diff", "give the OLD and the NEW POOL/SNAPSHOT");
	r = volume_spec(argv[optind], &pa, &a, false, true);
	if (r)
		return r;
	r = other_volume(&a, argv[optind + 1], &pb, &b);
	if (r)
		goto out;
	r = EXIT_REFUSED;
	fa = open_snapshot("diff", &a, false);
	fb = fa < 0 ? -1 : open_snapshot("diff", &b, false);
	if (fb < 0)
		goto out;
	snprintf(an, sizeof(an), "%s/%s", a.pool->meta.name, a.name);
	snprintf(bn, sizeof(bn), "%s/%s", b.pool->meta.name, b.name);
	if (ranges_of("diff", fa, fb, an, bn, b.meta.size, pool_block_size(&pa), &l, &c))
		goto out;
	for (i = 0; i < l.nr; i++)
		bytes += l.r[i].length;
	if (json) {
		/* Laid out as libsmartcols prints list --json ("},{" too); names need no escapes. */
		printf("{\n   \"old\": \"%s/%s\",\n   \"new\": \"%s/%s\",\n"
		       "   \"method\": \"%s\",\n   \"bytes\": %" PRIu64 ",\n   \"ranges\": [",
		       a.pool->meta.name, a.name, b.pool->meta.name, b.name, c.method, bytes);
		for (i = 0; i < l.nr; i++)
			printf("%s{\n         \"offset\": %" PRIu64 ",\n"
			       "         \"length\": %" PRIu64 ",\n         \"kind\": \"%s\"\n      }",
			       i ? "," : "\n      ", l.r[i].offset, l.r[i].length,
			       l.r[i].kind == RANGE_DATA ? "data" : "hole");
		printf("%s]\n}\n", l.nr ? "\n   " : "");
	} else {
		for (i = 0; i < l.nr; i++)
			printf("%" PRIu64 " %" PRIu64 " %s\n", l.r[i].offset, l.r[i].length,
			       l.r[i].kind == RANGE_DATA ? "data" : "hole");
	}
	r = 0;
out:
	range_list_free(&l);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	pool_close(&pb);
	pool_close(&pa);
	return r;
}

/* --- send */

struct writer {
	EVP_MD_CTX *sha;
	struct counts *c;
};

static int put(struct writer *w, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	EVP_DigestUpdate(w->sha, buf, len);
	w->c->stream_bytes += len;
	while (len) {
		n = write(STDOUT_FILENO, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static int put_record(struct writer *w, uint32_t type, uint64_t offset,
		      uint64_t length, const void *payload, size_t plen)
{
	struct stream_record rec = {
		.type = htole32(type), .offset = htole64(offset), .length = htole64(length),
	};
	uint32_t crc = crc32c(0, &rec, sizeof(rec));

	crc = crc32c(crc, payload, plen);
	rec.crc = htole32(crc);
	if (put(w, &rec, sizeof(rec)))
		return -1;
	return plen ? put(w, payload, plen) : 0;
}

/* Options of send (from and dry set) and receive (both NULL). */
static int stream_options(int argc, char **argv, const char **from, bool *sum,
			  bool *quiet, bool *dry)
{
	const char *cmd = from ? "send" : "receive";

	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "summary", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = cmd_getopt(argc, argv, from ? "f:nsqh" : "sqh", opts)) != -1) {
		switch (c) {
		case 'f':
			/* getopt_long matches --from for receive too. */
			if (!from)
				return usage_error(cmd, "--from is an option of send");
			/* The last one winning would send what was not asked for. */
			if (*from)
				return usage_error(cmd, "--from given twice (%s, %s): give one BASE",
						   *from, optarg);
			*from = optarg;
			break;
		case 'n':
			if (!dry)
				return usage_error(cmd, "--dry-run is an option of send");
			*dry = true;
			break;
		case 's':
			*sum = true;
			break;
		case 'q':
			*quiet = true;
			break;
		case 'h':
			command_help(cmd);
			return -1;
		default:
			return usage_error(cmd, NULL);
		}
	}
	return 0;
}

/*
 * send --dry-run: what the stream would hold, as zfs send -nv says it,
 * on stdout; the counts for --summary.
 */
static void dry_run(const char *snap, const char *base, const struct range_list *l,
		    uint64_t stream, struct counts *c)
{
	char d[32], s[32];
	size_t i;

	for (i = 0; i < l->nr; i++) {
		if (l->r[i].kind == RANGE_HOLE) {
			c->hole_records++;
			c->hole_bytes += l->r[i].length;
		} else {
			c->data_records += (l->r[i].length + STREAM_MAX_DATA - 1) / STREAM_MAX_DATA;
			c->data_bytes += l->r[i].length;
		}
	}
	c->stream_bytes = stream;
	format_size(d, sizeof(d), c->data_bytes);
	format_size(s, sizeof(s), stream);
	printf("Would send %s%s%s: %s of data in %" PRIu64 " records and %" PRIu64 " holes, a stream of %s (%" PRIu64 " bytes)\n",
	       snap, base ? " from " : "", base ? base : "", d, c->data_records,
	       c->hole_records, s, stream);
}

int cmd_send(int argc, char **argv)
{
	char text[STREAM_MAX_TEXT], base_name[2 * SUBVOL_NAME_MAX + 2] = "";
	struct pool pool, bpool = { .dirfd = -1 };
	struct stream_header hdr = { 0 };
	const char *from = NULL;
	struct range_list l = { 0 };
	struct counts c = { 0 };
	char sn[2 * SUBVOL_NAME_MAX + 2], bn[2 * SUBVOL_NAME_MAX + 2] = "";
	struct volume snap, base;
	bool sum = false, quiet = false, dry = false;
	unsigned char digest[SHA256_LEN], *buf = NULL;
	struct writer w = { .c = &c };
	struct progress prog;
	int sfd = -1, bfd = -1, n, r = EXIT_REFUSED;
	uint64_t nr = 0, data = 0, off, len, done = 0;
	uint32_t block;
	size_t i;

	c.start = now_seconds();
	n = stream_options(argc, argv, &from, &sum, &quiet, &dry);
	if (n)
		return n < 0 ? 0 : n;
	if (optind != argc - 1)
		return usage_error("send", "give one POOL/SNAPSHOT");
	if (!dry && isatty(STDOUT_FILENO)) {
		errmsg("send: the stream would go to a terminal; redirect it to a file or a pipe");
		return EXIT_REFUSED;
	}
	r = volume_spec(argv[optind], &pool, &snap, false, true);
	if (r)
		return r;
	r = EXIT_REFUSED;
	sfd = open_snapshot("send", &snap, true);
	if (sfd < 0)
		goto out;
	if (from) {
		r = other_volume(&snap, from, &bpool, &base);
		if (r)
			goto out;
		r = EXIT_REFUSED;
		bfd = open_snapshot("send", &base, true);
		if (bfd < 0)
			goto out;
		if (!strcmp(base.meta.id, snap.meta.id)) {
			errmsg("send: --from %s is the snapshot itself", from);
			goto out;
		}
		if (base_trusted("send", &base))
			goto out;
		snprintf(base_name, sizeof(base_name), "%s", base.name);
	}
	block = pool_block_size(&pool);
	snprintf(sn, sizeof(sn), "%s/%s", snap.pool->meta.name, snap.name);
	if (from)
		snprintf(bn, sizeof(bn), "%s/%s", base.pool->meta.name, base.name);
	if (ranges_of("send", bfd, sfd, bn, sn, snap.meta.size, block, &l, &c))
		goto out;
	for (i = 0; i < l.nr; i++) {
		if (l.r[i].kind == RANGE_DATA) {
			data += l.r[i].length;
			nr += (l.r[i].length + STREAM_MAX_DATA - 1) / STREAM_MAX_DATA;
		} else {
			nr++;
		}
	}

	n = volume_meta_format(text, sizeof(text), &snap.meta);
	n += snprintf(text + n, sizeof(text) - n, "name=%s\nbase_id=%s\nbase_name=%s\n",
		      snap.name, from ? base.meta.id : "", base_name);
	memcpy(hdr.magic, STREAM_MAGIC, sizeof(hdr.magic));
	hdr.version = htole32(STREAM_VERSION);
	hdr.size = htole64(snap.meta.size);
	hdr.block_size = htole32(block);
	hdr.text_len = htole32(n);
	hdr.data_bytes = htole64(data);
	hdr.nr_records = htole64(nr);
	hdr.crc = htole32(crc32c(crc32c(0, &hdr, sizeof(hdr)), text, n));
	if (dry) {
		dry_run(sn, from ? bn : NULL, &l, n + (nr + 1) * sizeof(struct stream_record) +
			sizeof(hdr) + data + SHA256_LEN, &c);
		if (sum)
			summary("send", snap.name, from ? base_name : NULL, &c);
		r = 0;
		goto out;
	}

	buf = malloc(STREAM_MAX_DATA);
	w.sha = EVP_MD_CTX_new();
	if (!buf || !w.sha || !EVP_DigestInit_ex(w.sha, EVP_sha256(), NULL)) {
		errmsg("send: out of memory");
		goto out;
	}
	progress_init(&prog, "send", "sending", data, quiet);
	if (put(&w, &hdr, sizeof(hdr)) || put(&w, text, n))
		goto write_error;
	for (i = 0; i < l.nr; i++) {
		if (l.r[i].kind == RANGE_HOLE) {
			if (put_record(&w, STREAM_HOLE, l.r[i].offset, l.r[i].length, NULL, 0))
				goto write_error;
			c.hole_records++;
			c.hole_bytes += l.r[i].length;
			continue;
		}
		for (off = l.r[i].offset; off < l.r[i].offset + l.r[i].length; off += len) {
			len = l.r[i].offset + l.r[i].length - off;
			if (len > STREAM_MAX_DATA)
				len = STREAM_MAX_DATA;
			if (pread_full(sfd, buf, len, off) != (ssize_t)len) {
				errmsg("send: cannot read %s at %" PRIu64 ": %s", snap.path, off,
				       errno ? strerror(errno) : "the file is shorter than its volume");
				goto out;
			}
			if (put_record(&w, STREAM_DATA, off, len, buf, len))
				goto write_error;
			c.data_records++;
			c.data_bytes += len;
			done += len;
			progress_show(&prog, done, false);
		}
	}
	EVP_DigestFinal_ex(w.sha, digest, NULL);
	if (put_record(&w, STREAM_END, 0, nr, digest, sizeof(digest)))
		goto write_error;
	progress_show(&prog, done, true);
	if (sum)
		summary("send", snap.name, from ? base_name : NULL, &c);
	r = 0;
	goto out;
write_error:
	errmsg("send: cannot write the stream: %s", strerror(errno));
out:
	EVP_MD_CTX_free(w.sha);
	free(buf);
	range_list_free(&l);
	if (sfd >= 0)
		close(sfd);
	if (bfd >= 0)
		close(bfd);
	pool_close(&bpool);
	pool_close(&pool);
	return r;
}

/* --- receive */

struct reader {
	EVP_MD_CTX *sha;
	struct counts *c;
	bool hashing;
	size_t partial;		/* bytes of the last get() cut by the end */
};

/* Exactly len bytes, or 1 at the end of the stream, or -1 on an error. */
static int get(struct reader *rd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(STDIN_FILENO, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n) {
			rd->partial = got;
			return 1;
		}
		got += n;
	}
	if (rd->hashing)
		EVP_DigestUpdate(rd->sha, buf, len);
	rd->c->stream_bytes += len;
	return 0;
}

/* The value of key in the stream's text ("" if absent). */
static void text_value(const char *text, const char *key, char *out, size_t len)
{
	size_t k = strlen(key);
	const char *p = text;

	out[0] = '\0';
	while (p && *p) {
		if (!strncmp(p, key, k) && p[k] == '=') {
			snprintf(out, len, "%.*s", (int)strcspn(p + k + 1, "\n"), p + k + 1);
			return;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

/* A volume of the pool with this id, into v; 0 found, 1 not, -1 error. */
static int find_by_id(struct pool *pool, const char *id, struct volume *v)
{
	char **names = pool_volumes(pool), **p;
	int r = 1;

	if (!names)
		return -1;
	for (p = names; *p && r == 1; p++) {
		if (volume_load(pool, *p, v, true))
			continue;
		if (!strcmp(v->meta.id, id))
			r = 0;
	}
	free_names(names);
	return r;
}

int cmd_receive(int argc, char **argv)
{
	char text[STREAM_MAX_TEXT + 1], name[SUBVOL_NAME_MAX + 1], base_id[64], base_name[80];
	char parse[STREAM_MAX_TEXT + 1], err[256], need[32], have[32], extra;
	struct new_image img = { .fd = -1 };
	struct stream_header hdr;
	struct stream_record rec;
	struct volume_meta meta;
	struct clone_result cres;
	struct counts c = { 0 };
	struct reader rd = { .c = &c, .hashing = true };
	struct volume dst, base, other;
	struct progress prog;
	struct statvfs sv;
	struct pool pool;
	const char *what = "stream";
	unsigned char digest[SHA256_LEN], *buf = NULL;
	bool sum = false, quiet = false;
	uint64_t size, data_bytes, nr, seen = 0, pos = 0, off, len, done = 0;
	uint32_t block, crc, text_len;
	int n, r = EXIT_REFUSED;

	c.start = now_seconds();
	n = stream_options(argc, argv, NULL, &sum, &quiet, NULL);
	if (n)
		return n < 0 ? 0 : n;
	if (optind != argc - 1 && optind != argc - 2)
		return usage_error("receive", "give the POOL (and a NAME, to use another name than the sender's)");
	if (optind == argc - 2 && !valid_name(argv[optind + 1]))
		return usage_error("receive", "\"%s\" is not a valid name (letters, digits, +_.-; at most %d; no leading - or .)",
				   argv[optind + 1], SUBVOL_NAME_MAX);
	if (isatty(STDIN_FILENO)) {
		errmsg("receive: the stream would come from a terminal; give it on stdin from a file or a pipe");
		return EXIT_REFUSED;
	}
	if (pool_open(argv[optind], &pool, false))
		return EXIT_REFUSED;
	rd.sha = EVP_MD_CTX_new();
	buf = malloc(STREAM_MAX_DATA);
	if (!rd.sha || !buf || !EVP_DigestInit_ex(rd.sha, EVP_sha256(), NULL)) {
		errmsg("receive: out of memory");
		goto out;
	}

	/* The header: all of it is checked before anything is made. */
	n = get(&rd, &hdr, sizeof(hdr));
	if (n > 0 && rd.partial &&
	    !memcmp(hdr.magic, STREAM_MAGIC, rd.partial < 16 ? rd.partial : 16)) {
		errmsg("receive: the stream ends early (inside its header): nothing was received");
		goto out;
	}
	if (n || memcmp(hdr.magic, STREAM_MAGIC, sizeof(hdr.magic))) {
		errmsg("receive: the input is %s", n < 0 ? "unreadable" :
		       n > 0 && !rd.partial ? "empty (no stream)" : "not a subvol stream");
		goto out;
	}
	if (le32toh(hdr.version) != STREAM_VERSION) {
		errmsg("receive: stream version %u; this subvol reads version %d",
		       le32toh(hdr.version), STREAM_VERSION);
		goto out;
	}
	text_len = le32toh(hdr.text_len);
	if (text_len > STREAM_MAX_TEXT) {
		errmsg("receive: the stream's header is too long (corrupt)");
		goto out;
	}
	n = get(&rd, text, text_len);
	if (n) {
		errmsg("receive: %s", n < 0 ? "the input is unreadable" :
		       "the stream ends early (inside its header): nothing was received");
		goto out;
	}
	text[text_len] = '\0';
	crc = le32toh(hdr.crc);
	hdr.crc = 0;
	if (crc32c(crc32c(0, &hdr, sizeof(hdr)), text, text_len) != crc) {
		errmsg("receive: the stream's header is corrupt (checksum mismatch)");
		goto out;
	}
	size = le64toh(hdr.size);
	block = le32toh(hdr.block_size);
	data_bytes = le64toh(hdr.data_bytes);
	nr = le64toh(hdr.nr_records);
	memcpy(parse, text, text_len + 1);
	if (volume_meta_parse(parse, &meta, err, sizeof(err)) || meta.size != size ||
	    !block || block & (block - 1) || size % block) {
		errmsg("receive: the stream's header does not describe a volume (%s)",
		       err[0] ? err : "bad size or block size");
		goto out;
	}
	text_value(text, "name", name, sizeof(name));
	if (optind == argc - 2)
		snprintf(name, sizeof(name), "%s", argv[optind + 1]);
	text_value(text, "base_id", base_id, sizeof(base_id));
	text_value(text, "base_name", base_name, sizeof(base_name));

	/* What the pool must have, and must not. */
	if (volume_load(&pool, name, &dst, false))
		goto out;
	if (dst.exists) {
		errmsg("receive: pool %s has a volume %s already (give another NAME)",
		       pool.meta.name, name);
		goto out;
	}
	if (find_by_id(&pool, meta.id, &other) == 0) {
		errmsg("receive: pool %s holds this snapshot already, as %s (id %s)",
		       pool.meta.name, other.name, meta.id);
		goto out;
	}
	if (base_id[0] && find_by_id(&pool, base_id, &base)) {
		errmsg("receive: the stream is incremental from snapshot %s (id %s), which pool %s does not hold",
		       base_name[0] ? base_name : "?", base_id, pool.meta.name);
		goto out;
	}
	if (base_id[0] && base_trusted("receive", &base))
		goto out;
	/* The data, and a margin for the host's own metadata (extents, btrees). */
	if (!fstatvfs(pool.dirfd, &sv) &&
	    (uint64_t)sv.f_bavail * sv.f_frsize < data_bytes + data_bytes / 100 + (4 << 20)) {
		format_size(need, sizeof(need), data_bytes + data_bytes / 100 + (4 << 20));
		format_size(have, sizeof(have), (uint64_t)sv.f_bavail * sv.f_frsize);
		errmsg("receive: pool %s has %s free; the stream needs %s (its data and 1%% + 4M for the host's metadata)",
		       pool.meta.name, have, need);
		goto out;
	}

	/* The new image, unnamed until the stream checks out. */
	if (base_id[0]) {
		if (volume_clone(&base, &img, &cres, meta.extent_size))
			goto out;
	} else if (image_tmp_open(&pool, &img) ||
		   (meta.extent_size &&
		    image_set_extent_size(img.fd, meta.extent_size, err, sizeof(err)))) {
		errmsg("receive: cannot make a file in %s: %s", pool.path, strerror(errno));
		goto out;
	}
	if (ftruncate(img.fd, size)) {
		errmsg("receive: cannot size the image: %s", strerror(errno));
		goto out;
	}

	progress_init(&prog, "receive", "receiving", data_bytes, quiet);
	for (;;) {
		/*
		 * The END record's payload is the hash of what came before it:
		 * a record header is hashed only once it is known not to be END.
		 */
		rd.hashing = false;
		n = get(&rd, &rec, sizeof(rec));
		if (n)
			goto cut;
		if (le32toh(rec.type) != STREAM_END)
			EVP_DigestUpdate(rd.sha, &rec, sizeof(rec));
		rd.hashing = true;
		off = le64toh(rec.offset);
		len = le64toh(rec.length);
		crc = le32toh(rec.crc);
		rec.crc = 0;
		switch (le32toh(rec.type)) {
		case STREAM_END:
			EVP_DigestFinal_ex(rd.sha, digest, NULL);
			rd.hashing = false;
			if (get(&rd, buf, SHA256_LEN))
				goto cut;
			if (crc32c(crc32c(0, &rec, sizeof(rec)), buf, SHA256_LEN) != crc) {
				what = "end record";
				goto corrupt;
			}
			/* A full stream says what every block holds. */
			if (!base_id[0] && pos != size) {
				errmsg("receive: the full stream ends at byte %" PRIu64 " of its %" PRIu64 " (corrupt stream): nothing was received",
				       pos, size);
				goto out;
			}
			if (len != seen || seen != nr || c.data_bytes != data_bytes) {
				errmsg("receive: the stream holds %" PRIu64 " records, %" PRIu64 " bytes of data; its header announced %" PRIu64 ", %" PRIu64,
				       seen, c.data_bytes, nr, data_bytes);
				goto out;
			}
			if (memcmp(digest, buf, SHA256_LEN)) {
				errmsg("receive: the stream's checksum does not match: it was changed on the way");
				goto out;
			}
			if (read(STDIN_FILENO, &extra, 1) > 0) {
				errmsg("receive: bytes follow the stream's end record");
				goto out;
			}
			goto verified;
		case STREAM_DATA:
		case STREAM_HOLE:
			break;
		default:
			errmsg("receive: record %" PRIu64 " has an unknown type %u (corrupt stream)",
			       seen + 1, le32toh(rec.type));
			goto out;
		}
		seen++;
		if (off < pos || !len || off % block || len % block || off + len > size ||
		    off + len < off ||
		    (le32toh(rec.type) == STREAM_DATA && len > STREAM_MAX_DATA)) {
			errmsg("receive: record %" PRIu64 " (offset %" PRIu64 ", length %" PRIu64 ") is out of order or out of bounds (corrupt stream)",
			       seen, off, len);
			goto out;
		}
		if (!base_id[0] && off != pos) {
			errmsg("receive: record %" PRIu64 " (offset %" PRIu64 ") leaves bytes %" PRIu64 "-%" PRIu64 " of a full stream undescribed (corrupt stream)",
			       seen, off, pos, off - 1);
			goto out;
		}
		pos = off + len;
		if (le32toh(rec.type) == STREAM_HOLE) {
			if (crc32c(0, &rec, sizeof(rec)) != crc) {
				what = "hole record";
				goto corrupt;
			}
			if (fallocate(img.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      off, len) && errno != EOPNOTSUPP) {
				errmsg("receive: cannot punch a hole: %s", strerror(errno));
				goto out;
			}
			c.hole_records++;
			c.hole_bytes += len;
			continue;
		}
		if (get(&rd, buf, len))
			goto cut;
		if (crc32c(crc32c(0, &rec, sizeof(rec)), buf, len) != crc) {
			what = "data record";
			goto corrupt;
		}
		if (pwrite(img.fd, buf, len, off) != (ssize_t)len) {
			errmsg("receive: cannot write the image: %s", errno == ENOSPC ?
			       "the pool is full" : strerror(errno));
			goto out;
		}
		c.data_records++;
		c.data_bytes += len;
		done += len;
		progress_show(&prog, done, false);
	}

verified:
	progress_show(&prog, done, true);
	if (flock(pool.dirfd, LOCK_EX)) {
		errmsg("receive: cannot lock pool %s: %s", pool.meta.name, strerror(errno));
		goto out;
	}
	meta.kind = VOLUME_KIND_SNAPSHOT;
	meta.host_lvm = false;
	if (volume_meta_write(img.fd, &meta) || image_publish(&img, name, false)) {
		errmsg("receive: cannot make %s/%s: %s", pool.meta.name, name,
		       errno == EEXIST ? "the name was taken meanwhile" : strerror(errno));
		goto out;
	}
	if (image_seal(&pool, img.fd, meta.id)) {
		errmsg("receive: snapshot %s/%s: cannot seal it (make it immutable): %s",
		       pool.meta.name, name, strerror(errno));
		goto out;
	}
	c.method = NULL;
	if (sum)
		summary("receive", name, base_id[0] ? base.name : NULL, &c);
	printf("Received snapshot %s/%s (%" PRIu64 " bytes of data in %" PRIu64 " data and %" PRIu64 " hole records%s%s)\n",
	       pool.meta.name, name, c.data_bytes, c.data_records, c.hole_records,
	       base_id[0] ? ", on top of " : "", base_id[0] ? base.name : "");
	r = 0;
	goto out;
cut:
	errmsg("receive: the stream ends early (after %" PRIu64 " of %" PRIu64 " records): nothing was received",
	       seen, nr);
	goto out;
corrupt:
	if (!strcmp(what, "end record"))
		errmsg("receive: the end record is corrupt (checksum mismatch): nothing was received");
	else
		errmsg("receive: %s %" PRIu64 " is corrupt (checksum mismatch): nothing was received",
		       what, seen);
out:
	image_discard(&img);
	EVP_MD_CTX_free(rd.sha);
	free(buf);
	pool_close(&pool);
	return r;
}
