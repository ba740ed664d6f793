#!/usr/bin/env python3
"""Mutate a subvol send stream for scripts/fuzz-receive, and check what a
receive of it made.

    fuzz-mutate.py raw STREAM SEED OUT
    fuzz-mutate.py sealed STREAM SEED OUT
    fuzz-mutate.py check STREAM BASE IMAGE

raw: OUT is STREAM changed by one to four byte-level mutations chosen by
SEED (a flipped bit, a random byte, 0 or 0xff, 4 or 8 bytes set to an
extreme integer, a cut, bytes inserted, a range deleted, duplicated or
moved), half of them in the first 4 KiB.  The checksums then fail.

sealed: OUT is STREAM with one or two changes to its structure (a header
field, a line of the header's text, a record's type, offset or length,
records dropped, repeated, swapped, an END too early or with the wrong
count, a record after it), then every checksum and the final SHA-256
computed anew, so that the receiver's own checks of the structure are
what must refuse it.  The header's totals follow the records unless the
change was to them.

Both print the mutations, one word each, and always change the stream.

    fuzz-mutate.py reseal STREAM [KEY] OUT

takes STREAM apart and seals it again unchanged (OUT must be STREAM, or
this script's idea of the format is wrong), or without the text's line
of KEY.

check: exit 0 if IMAGE holds what STREAM, applied to BASE (a file, or
"-" for none: a full stream), describes: the header's size, DATA where
the records say, zeros for HOLE records and beyond BASE.  Exit 1 (and
why on stderr) if not, or if the stream cannot be applied at all.

The stream format is userspace/subvol/model/stream.h's.
"""
import hashlib
import os
import random
import struct
import sys

HDR = struct.Struct("<16sIIQIIQQ")
REC = struct.Struct("<IIQQ")
DATA, HOLE, END = 1, 2, 3
EXTREMES = [0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0x80000000,
            0xffffffff, 0x7fffffffffffffff, 0x8000000000000000,
            0xffffffffffffffff, 4096, 4095, 1 << 40]

_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(crc, data):
    crc ^= 0xFFFFFFFF
    t = _TABLE
    for b in data:
        crc = (crc >> 8) ^ t[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


# --- raw ---------------------------------------------------------------

def pos(rng, n):
    if n <= 1:
        return 0
    if rng.random() < 0.5:
        return rng.randrange(min(n, 4096))
    return rng.randrange(n)


def raw_mutation(rng, data):
    n = len(data)
    kind = rng.choice(["flip", "byte", "zero_ff", "int", "cut", "insert",
                       "delete", "dup", "move"])
    if kind == "flip":
        data[pos(rng, n)] ^= 1 << rng.randrange(8)
    elif kind == "byte":
        data[pos(rng, n)] = rng.randrange(256)
    elif kind == "zero_ff":
        data[pos(rng, n)] = rng.choice([0, 0xff])
    elif kind == "int":
        width = rng.choice([4, 8])
        p = min(pos(rng, n), max(n - width, 0))
        v = rng.choice(EXTREMES) & ((1 << (8 * width)) - 1)
        fmt = rng.choice(["<", ">"]) + ("I" if width == 4 else "Q")
        data[p:p + width] = struct.pack(fmt, v)
    elif kind == "cut":
        del data[pos(rng, n):]
    elif kind == "insert":
        p = pos(rng, n)
        data[p:p] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    elif kind == "delete":
        p = pos(rng, n)
        del data[p:p + rng.randrange(1, 4096)]
    else:
        p = pos(rng, n)
        chunk = data[p:p + rng.randrange(1, 8192)]
        if kind == "move":
            del data[p:p + len(chunk)]
        q = pos(rng, len(data))
        data[q:q] = chunk
    return kind


# --- parsing and sealing -----------------------------------------------

class Stream:
    """A stream taken apart: header fields, text lines, records."""

    def __init__(self, blob):
        (self.magic, self.version, _crc, self.size, self.block_size,
         text_len, self.data_bytes, self.nr_records) = HDR.unpack_from(blob)
        p = HDR.size
        self.text = blob[p:p + text_len]
        p += text_len
        self.records = []	# [type, offset, length, payload]
        self.end_count = None
        while p < len(blob):
            rtype, _crc, off, length = REC.unpack_from(blob, p)
            p += REC.size
            if rtype == DATA:
                payload = blob[p:p + length]
            elif rtype == END:
                payload = blob[p:p + 32]
            else:
                payload = b""
            p += len(payload)
            if rtype == END:
                self.end_count = length
                break
            self.records.append([rtype, off, length, payload])
        self.totals_fixed = False
        self.end_where = None	# index of an early END, or None
        self.after_end = []

    def seal(self):
        recs = self.records
        if not self.totals_fixed:
            self.nr_records = len(recs)
            self.data_bytes = sum(r[2] for r in recs if r[0] == DATA)
        hdr = HDR.pack(self.magic, self.version, 0, self.size, self.block_size,
                       len(self.text), self.data_bytes, self.nr_records)
        crc = crc32c(crc32c(0, hdr), self.text)
        out = bytearray(HDR.pack(self.magic, self.version, crc, self.size,
                                 self.block_size, len(self.text),
                                 self.data_bytes, self.nr_records) + self.text)
        end_at = len(recs) if self.end_where is None else self.end_where

        def record(rtype, off, length, payload):
            rec = REC.pack(rtype, 0, off, length)
            crc = crc32c(crc32c(0, rec), payload)
            out.extend(REC.pack(rtype, crc, off, length) + payload)

        for r in recs[:end_at]:
            record(*r)
        count = end_at if self.end_count_delta is None else end_at + self.end_count_delta
        record(END, 0, count & 0xFFFFFFFFFFFFFFFF, hashlib.sha256(bytes(out)).digest())
        for r in recs[end_at:] + self.after_end:
            record(*r)
        return bytes(out)

    end_count_delta = None


def sealed_mutation(rng, s):
    recs = s.records
    kinds = ["hdr", "text_drop", "text_dup", "text_value", "text_key",
             "text_nul", "text_huge"]
    if recs:
        kinds += ["rec_type", "rec_offset", "rec_length", "rec_drop",
                  "rec_dup", "rec_swap", "end_count", "end_early",
                  "after_end"] * 2
    kind = rng.choice(kinds)
    lines = s.text.split(b"\n")
    if kind == "hdr":
        field = rng.choice(["size", "block_size", "data_bytes", "nr_records", "version"])
        old = getattr(s, field)
        new = rng.choice(EXTREMES + [old + 1, old - 1, old + 4096, old * 2, old // 2,
                                     512, 1 << 20])
        width = 32 if field in ("block_size", "version") else 64
        setattr(s, field, new & ((1 << width) - 1))
        if field in ("data_bytes", "nr_records"):
            s.totals_fixed = True
        kind += "_" + field
    elif kind == "text_drop" and lines:
        del lines[rng.randrange(len(lines))]
    elif kind == "text_dup" and lines:
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == "text_value" and lines:
        i = rng.randrange(len(lines))
        key = lines[i].split(b"=", 1)[0]
        value = rng.choice([b"", b"0", b"-1", b"18446744073709551616", b"x" * 300,
                            b"%032x" % rng.getrandbits(128), b"../x", b"a/b",
                            b"9" * 30, b" 1", b"\xff\xfe"])
        lines[i] = key + b"=" + value
        kind += "_" + key.decode(errors="replace")
    elif kind == "text_key":
        lines.insert(rng.randrange(len(lines) + 1),
                     rng.choice([b"unknown=1", b"=x", b"novalue", b"format=2"]))
    elif kind == "text_nul" and lines:
        i = rng.randrange(len(lines))
        lines[i] = lines[i][:1] + b"\0" + lines[i][1:]
    elif kind == "text_huge":
        lines.append(b"pad=" + b"p" * rng.choice([4000, 8200, 70000]))
    elif kind == "rec_type":
        recs[rng.randrange(len(recs))][0] = rng.choice([0, 4, 0xFFFFFFFF, DATA, HOLE])
    elif kind == "rec_offset":
        r = recs[rng.randrange(len(recs))]
        r[1] = rng.choice(EXTREMES + [r[1] + 1, r[1] - 4096, r[1] + 4096,
                                      s.size, s.size - 4096, 0]) & 0xFFFFFFFFFFFFFFFF
    elif kind == "rec_length":
        r = recs[rng.randrange(len(recs))]
        new = rng.choice([0, 1, 4095, 4097, r[2] + 4096, r[2] - 4096, 1 << 20,
                          (1 << 20) + 4096, s.size, 1 << 40]) & 0xFFFFFFFFFFFFFFFF
        if r[0] == DATA and new <= 2 << 20 and rng.random() < 0.5:
            r[3] = (r[3] + bytes(new))[:new]	# the payload follows
        r[2] = new
    elif kind == "rec_drop":
        del recs[rng.randrange(len(recs))]
    elif kind == "rec_dup":
        i = rng.randrange(len(recs))
        recs.insert(rng.randrange(len(recs) + 1), list(recs[i]))
    elif kind == "rec_swap" and len(recs) > 1:
        i, j = rng.sample(range(len(recs)), 2)
        recs[i], recs[j] = recs[j], recs[i]
    elif kind == "end_count":
        s.end_count_delta = rng.choice([-1, 1, 1 << 32, -(1 << 20)])
    elif kind == "end_early":
        s.end_where = rng.randrange(len(recs))
    elif kind == "after_end":
        s.after_end.append(list(rng.choice(recs)))
    else:
        return None
    s.text = b"\n".join(lines)
    return kind


# --- check ---------------------------------------------------------------

def check(stream_path, base_path, image_path):
    with open(stream_path, "rb") as f:
        s = Stream(f.read())
    size = s.size
    if s.block_size == 0 or size % s.block_size:
        return "the header's size is not whole blocks"
    base = b""
    if base_path != "-":
        with open(base_path, "rb") as f:
            base = f.read()
    if os.path.getsize(image_path) != size:
        return "the image is %d bytes, the stream says %d" % (os.path.getsize(image_path), size)
    if size > 1 << 30 and len(base) < 1 << 30:
        limit = max([len(base)] + [r[1] + r[2] for r in s.records])
    else:
        limit = size
    if limit > 1 << 30:
        return "a record reaches %d bytes" % limit
    full = not any(l.startswith(b"base_id=") and len(l) > 8 for l in s.text.split(b"\n"))
    if full:
        base = b""
    want = bytearray(base[:limit]) + bytes(max(0, limit - len(base)))
    covered = 0
    for rtype, off, length, payload in s.records:
        if full and off != covered:
            return "a full stream with a gap before byte %d, which the receiver should have refused" % off
        covered = off + length
        if rtype not in (DATA, HOLE) or off + length > size:
            return "a record the receiver should have refused"
        if rtype == DATA:
            if len(payload) != length:
                return "a DATA record's payload is not its length"
            want[off:off + length] = payload
        else:
            want[off:off + length] = bytes(length)
    if full and covered != size:
        return "a full stream that ends at byte %d of %d, which the receiver should have refused" % (covered, size)
    with open(image_path, "rb") as f:
        got = f.read(limit)
        if got != bytes(want[:limit]):
            i = next(k for k in range(min(len(got), limit)) if got[k] != want[k]) \
                if len(got) == limit else len(got)
            return "the image differs from the stream's content at byte %d" % i
        try:
            data = os.lseek(f.fileno(), limit, os.SEEK_DATA)
        except OSError:
            data = None
        if data is not None and data < size:
            f.seek(data)
            if any(f.read(1 << 20)):
                return "data beyond what the stream wrote, at byte %d" % data
    return None


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "check":
        why = check(*sys.argv[2:])
        if why:
            print(why, file=sys.stderr)
            sys.exit(1)
        return
    if len(sys.argv) in (4, 5) and sys.argv[1] == "reseal":
        with open(sys.argv[2], "rb") as f:
            s = Stream(f.read())
        if len(sys.argv) == 5:	# reseal STREAM KEY OUT: without KEY's line
            key = sys.argv[3].encode() + b"="
            s.text = b"\n".join(l for l in s.text.split(b"\n") if not l.startswith(key))
        data = s.seal()
        with open(sys.argv[-1], "wb") as f:
            f.write(data)
        return
    if len(sys.argv) != 5 or sys.argv[1] not in ("raw", "sealed"):
        sys.exit("usage: fuzz-mutate.py raw|sealed STREAM SEED OUT | check STREAM BASE IMAGE")
    mode, path, seed, out = sys.argv[1:]
    with open(path, "rb") as f:
        orig = f.read()
    rng = random.Random(int(seed))
    kinds = []
    if mode == "raw":
        data = bytearray(orig)
        while not kinds or bytes(data) == orig:
            for _ in range(rng.randrange(1, 5)):
                kinds.append(raw_mutation(rng, data))
        data = bytes(data)
    else:
        data = orig
        while not kinds or data == orig:
            s = Stream(orig)
            kinds = [k for k in (sealed_mutation(rng, s)
                                 for _ in range(rng.randrange(1, 3))) if k]
            data = s.seal()
    with open(out, "wb") as f:
        f.write(data)
    print(" ".join(kinds))


if __name__ == "__main__":
    main()
