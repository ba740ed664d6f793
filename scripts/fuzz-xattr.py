#!/usr/bin/env python3
"""The loop of scripts/fuzz-xattr (see its --help): run by it, as

    fuzz-xattr.py WORK SUBVOL TOOL ITERATIONS SEED OUT

WORK/mnt is an empty XFS; SUBVOL the tool that sets the pools up, TOOL the
one fuzzed; OUT "" or a directory for the failing cases.

Each iteration writes one attribute: user.subvol.volume of a volume or a
snapshot, user.subvol.pool or user.subvol.monitor of the pool, or the
seal user.subvol.seal.<id> of a snapshot.  The value is either valid by
construction (the grammar below, which userspace/subvol/model/meta.c reads) or
carries one known defect, and every command that reads the attribute
runs.  A valid value must be accepted and its values reported; a
defective one refused by each command with exit status 1 and one line on
stderr naming the object and the attribute, nothing on disk changed,
the other volumes and pools still listed.

The grammar: "format=1" then key=value lines, each ending in a newline;
keys [a-z0-9_]+, each once; keys the reader does not know are ignored
(subvol(8): later formats add keys), those it writes are all there
(host_lvm, which 1.0 did not write, and the autoextend_ keys of a pool
without a policy excepted); numbers are decimal digits within their
field's range; ids 32 lowercase hex digits; names valid subvol names.
"""
import fcntl
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import time

FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_IMMUTABLE_FL = 0x10
U64 = 1 << 64
INT64_MAX = (1 << 63) - 1
LATEST = 4102444800	# 2100-01-01: created and monitor times up to it
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
SANITIZER = re.compile(r"ERROR: AddressSanitizer|runtime error:")
VOL_ATTR, POOL_ATTR, MON_ATTR = "user.subvol.volume", "user.subvol.pool", "user.subvol.monitor"
SEAL_PREFIX = "user.subvol.seal."
RECORD_ATTR = "trusted.dm-subvol.shared"
VOL_COLS = ("name,kind,size,created,id,origin_id,guarantee,no_space,no_space_timeout,"
            "low_water_mark,ignore_discard,extent_size,host_lvm")
VOL_KEYS = ["id", "kind", "size", "guarantee", "no_space", "no_space_timeout", "low_water",
            "ignore_discard", "extent_size", "origin_id", "origin_name", "created", "host_lvm"]
VOL_OPTIONAL = {"host_lvm"}
POOL_KEYS = ["name", "id", "created", "autoextend_threshold", "autoextend_step",
             "autoextend_max", "autoextend_command"]
POOL_OPTIONAL = {"autoextend_threshold", "autoextend_step", "autoextend_max",
                 "autoextend_command"}
MON_KEYS = ["extensions", "last_extension_time", "last_extension", "last_command_time",
            "last_command", "last_error_time", "last_error"]
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+_.-"
PRINTABLE = [chr(c) for c in range(0x20, 0x7f)]


def iso(t):
    """The tool's time with TZ=UTC, None for 0."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(t)) if t else None


def esc(b):
    """A value as a shell $'...' string."""
    out = []
    for c in b:
        if c == 0x27 or c == 0x5c:
            out.append("\\" + chr(c))
        elif 0x20 <= c < 0x7f:
            out.append(chr(c))
        elif c == 10:
            out.append("\\n")
        else:
            out.append("\\x%02x" % c)
    return "$'" + "".join(out) + "'"


def parse(value):
    """key=value lines (the tool's own, well formed) into a list of pairs."""
    lines = value.decode().split("\n")
    assert lines[0] == "format=1" and lines[-1] == ""
    return [tuple(line.split("=", 1)) for line in lines[1:-1]]


def text(pairs, fmt="format=1"):
    return ("\n".join([fmt] + ["%s=%s" % kv for kv in pairs]) + "\n").encode()


def flags(path, immutable=None):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        f = int.from_bytes(fcntl.ioctl(fd, FS_IOC_GETFLAGS, bytes(8))[:4], "little")
        if immutable is not None:
            f = f | FS_IMMUTABLE_FL if immutable else f & ~FS_IMMUTABLE_FL
            fcntl.ioctl(fd, FS_IOC_SETFLAGS, f.to_bytes(4, "little") + bytes(4))
        return f
    finally:
        os.close(fd)


# --- values ------------------------------------------------------------

class Gen:
    def __init__(self, rng):
        self.rng = rng

    def name(self, n=None):
        r = self.rng
        n = n or r.randint(1, 64)
        s = r.choice(NAME_CHARS[:62 + 2]) + "".join(r.choice(NAME_CHARS) for _ in range(n - 1))
        return s

    def hexid(self):
        return "%032x" % self.rng.getrandbits(128)

    def printable(self, lo, hi):
        return "".join(self.rng.choice(PRINTABLE) for _ in range(self.rng.randint(lo, hi)))

    def unknown_key(self, known):
        r = self.rng
        while True:
            k = r.choice(["zz_", "future_", "x", "k", ""]) + "".join(
                r.choice("abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(r.randint(1, 12)))
            if k not in known and k != "format":
                return k

    def number(self, hi):
        r = self.rng
        return r.choice([0, 1, hi, r.randint(0, hi), r.randint(0, min(hi, 1 << 20))])


NOT_NUMBERS = ["", "-1", "+1", " 1", "1 ", "0x10", "1e3", "abc", "1.5", "\u0661",
               "1\t", "01a", "\r", "-0"]
OVER = [str(U64), str(U64 * 10 + 7), "9" * 30]


class Case:
    """One value: the bytes, what it is, and (valid) what must be reported."""

    def __init__(self, target, value, kind, expect=None):
        self.target, self.value, self.kind, self.expect = target, value, kind, expect


def common_defect(g, pairs, keys, optional, fmt_ok=True):
    """A defect any key=value attribute can have: (kind, value)."""
    r = g.rng
    kind = r.choice(["missing_key", "duplicate_key", "format", "empty", "too_long", "nul",
                     "missing_newline", "truncated", "blank_line", "no_equals", "bad_key",
                     "crlf", "binary_key"])
    p = list(pairs)
    if kind == "missing_key":
        req = [i for i, (k, _v) in enumerate(p) if k in keys and k not in optional]
        del p[r.choice(req)]
        return kind, text(p)
    if kind == "duplicate_key":
        if r.random() < 0.15:
            p.insert(r.randint(0, len(p)), ("format", "1"))
        else:
            i = r.randrange(len(p))
            p.insert(r.randint(0, len(p)), p[i])
        return kind, text(p)
    if kind == "format":
        f = r.choice(["format=2", "format=", "format=01", "format=1 ", "fmt=1", "format=0",
                      "format=18446744073709551617", None])
        if f is None:
            return "no_format", ("\n".join("%s=%s" % kv for kv in p) + "\n").encode()
        return kind, text(p, f)
    if kind == "empty":
        return kind, r.choice([b"", b"\n", b"\n\n"])
    if kind == "too_long":
        v = text(p)
        pad = 4096 - len(v) + r.randint(0, 4000)
        p.insert(r.randint(0, len(p)), (g.unknown_key(keys), "y" * pad))
        return kind, text(p)
    if kind == "nul":
        v = bytearray(text(p))
        v.insert(r.randrange(len(v) + 1), 0)
        return kind, bytes(v)
    if kind == "missing_newline":
        return kind, text(p)[:-1]
    if kind == "truncated":
        v = text(p)
        while True:
            n = r.randrange(1, len(v) - 1)
            if v[n - 1] != 10:
                return kind, v[:n]
    if kind == "blank_line":
        lines = text(p).split(b"\n")[:-1]
        lines.insert(r.randint(1, len(lines)), b"")
        return kind, b"\n".join(lines) + b"\n"
    if kind == "no_equals":
        lines = text(p).split(b"\n")[:-1]
        lines.insert(r.randint(1, len(lines)), r.choice([b"size", b"x", b"name", b"-", b" "]))
        return kind, b"\n".join(lines) + b"\n"
    if kind == "bad_key":
        i = r.randrange(len(p))
        k, v = p[i]
        bad = r.choice(["", k.upper(), " " + k, k + " ", k[:1] + "-" + k[1:], k + "\t", k + "."])
        p[i] = (bad, v)
        return kind, text(p)
    if kind == "crlf":
        return kind, text(p).replace(b"\n", b"\r\n")
    # binary_key: a byte no key holds, in a key the reader knows
    lines = text(p).split(b"\n")[:-1]
    i = r.randint(1, len(lines) - 1)
    k, _sep, v = lines[i].partition(b"=")
    pos = r.randint(0, len(k))
    lines[i] = k[:pos] + bytes([r.choice([1, 0x7f, 0x80, 0xff, 0x1b, 0xc3])]) + k[pos:] + b"=" + v
    return kind, b"\n".join(lines) + b"\n"


def volume_case(g, target, pairs, valid):
    """pairs: the volume's own attribute; its size stays (the image's)."""
    r = g.rng
    d = dict(pairs)
    size = int(d["size"])
    snapshot = d["kind"] == "snapshot"
    if valid:
        for _ in range(r.randint(1, 4)):
            what = r.choice(["guarantee", "no_space", "timeout", "low_water", "discard",
                             "extent", "created", "host_lvm", "no_host_lvm", "unknown",
                             "order", "origin_name", "origin_none"])
            if what == "guarantee":
                d["guarantee"] = r.choice(["full", "none"])
            elif what == "no_space":
                d["no_space"] = r.choice(["error", "queue"])
            elif what == "timeout":
                d["no_space_timeout"] = str(r.choice([0, 1, 3600, r.randint(0, 3600)]))
            elif what == "low_water":
                d["low_water"] = str(r.choice([0, 1, size // 512 - 1, r.randint(0, size // 512 - 1)]))
            elif what == "discard":
                d["ignore_discard"] = r.choice("01")
            elif what == "extent":
                # The host refuses hints past a part of its AG size: 1M is safe.
                d["extent_size"] = str(4096 * r.choice([0, 1, 16, 256, r.randint(0, 256)]))
            elif what == "created":
                d["created"] = str(g.number(LATEST))
            elif what == "host_lvm":
                d["host_lvm"] = r.choice("01")
            elif what == "no_host_lvm":
                d.pop("host_lvm", None)
            elif what == "unknown":
                d[g.unknown_key(VOL_KEYS)] = r.choice(["", "1", g.printable(0, 60), "x=y"])
            elif what == "origin_name":
                d["origin_name"] = g.name()
            elif what == "origin_none":
                d["origin_id"] = d["origin_name"] = ""
        keys = list(d)
        first = [k for k in keys if k in VOL_KEYS]
        rest = [k for k in keys if k not in VOL_KEYS]
        if r.random() < 0.3:
            r.shuffle(keys)
        else:
            keys = first + rest
        value = text([(k, d[k]) for k in keys])
        queue = d["no_space"] == "queue"
        lw = int(d["low_water"])
        exp = {"kind": d["kind"], "size": size, "created": iso(int(d["created"])),
               "id": d["id"], "origin_id": d["origin_id"] or None,
               "guarantee": d["guarantee"], "no_space": d["no_space"],
               "no_space_timeout": (int(d["no_space_timeout"]) or 60) if queue else None,
               "low_water_mark": lw * 512 if lw else None,
               "ignore_discard": d["ignore_discard"] == "1",
               "extent_size": int(d["extent_size"]) or None,
               "host_lvm": d.get("host_lvm", "0") == "1" and not snapshot}
        return Case(target, value, "valid", exp)
    kind = r.choice(["common"] * 5 + ["not_number", "overflow", "range", "enum", "bad_id",
                                      "bad_name", "binary_value"])
    p = list(pairs)
    if kind == "common":
        kind, value = common_defect(g, p, VOL_KEYS, VOL_OPTIONAL)
        return Case(target, value, kind)
    nums = ["size", "no_space_timeout", "low_water", "ignore_discard", "extent_size",
            "created", "host_lvm"]
    if kind == "not_number":
        d[r.choice(nums)] = r.choice(NOT_NUMBERS)
    elif kind == "overflow":
        d[r.choice(nums)] = r.choice(OVER)
    elif kind == "range":
        key = r.choice(["size", "no_space_timeout", "low_water", "ignore_discard",
                        "extent_size", "created", "host_lvm"])
        d[key] = str(r.choice({
            "size": [0, 1, 511, size + 1, size - 256],
            "no_space_timeout": [3601, 1 << 32, (1 << 32) + 5, U64 - 1],
            "low_water": [size // 512, size // 512 + 1, 1 << 55, U64 - 1],
            "ignore_discard": [2, 7, 10, U64 - 1],
            "host_lvm": [2, 9, 100],
            "extent_size": [(1 << 30) + 4096, 1 << 31, 1 << 32, (1 << 32) + 4096, U64 - 4096],
            "created": [INT64_MAX + 1, U64 - 1],
        }[key]))
    elif kind == "enum":
        key = r.choice(["kind", "guarantee", "no_space"])
        good = {"kind": ["volume", "snapshot"], "guarantee": ["full", "none"],
                "no_space": ["error", "queue"]}[key]
        w = r.choice(good)
        d[key] = r.choice(["", w.upper(), w + " ", " " + w, w[:-1], w + "s", "clone", w + "\r"])
    elif kind == "bad_id":
        key = r.choice(["id", "origin_id"])
        h = g.hexid()
        d[key] = r.choice([h[:31], h + "0", h.upper(), h[:-1] + "g", "-" + h[1:], h[:16]]
                          + ([""] if key == "id" else []))
        if d[key] == h.upper() and h == h.upper():
            d[key] = h[:31]
    elif kind == "bad_name":
        d["origin_name"] = r.choice(["-x", ".x", "a/b", "../x", "a b", "x" * 65, "a:b", "a\\b"])
    else:	# binary_value: in a value that is a number, an id, a word or a name
        key = r.choice(["size", "kind", "id", "guarantee", "created", "origin_name",
                        "extent_size"])
        v = d[key] or "x"
        pos = r.randint(0, len(v))
        b = bytes([r.choice([1, 0x7f, 0x80, 0xff, 0x1b, 0x09, 0x0b, 0x0c, 0x0d])])
        p = [(k, d[k]) for k in d]
        value = bytearray(text(p))
        i = value.index(("\n%s=" % key).encode()) + len(key) + 2 + pos
        value[i:i] = b
        return Case(target, bytes(value), kind)
    return Case(target, text([(k, d[k]) for k in d]), kind)


def pool_case(g, pairs, valid):
    r = g.rng
    d = dict(pairs)
    if valid:
        for _ in range(r.randint(1, 4)):
            what = r.choice(["created", "id", "threshold", "step", "max", "command",
                             "unknown", "order", "none"])
            if what == "created":
                d["created"] = str(g.number(LATEST))
            elif what == "id":
                d["id"] = g.hexid()
            elif what == "threshold":
                # Never past it: the pool's XFS is nearly empty.
                d["autoextend_threshold"] = r.choice(["%d%%" % r.randint(50, 99), "0",
                                                      str(r.randint(0, 1 << 20))])
            elif what == "step":
                d["autoextend_step"] = r.choice(["%d%%" % r.randint(1, 1000), "0",
                                                 str(g.number(INT64_MAX))])
            elif what == "max":
                d["autoextend_max"] = str(g.number(U64 - 1))
            elif what == "command":
                d["autoextend_command"] = r.choice(["", "/bin/true", g.printable(0, 1024),
                                                    "a=b c", "/x/%s" % g.name()])
            elif what == "unknown":
                d[g.unknown_key(POOL_KEYS)] = g.printable(0, 80)
            elif what == "none":
                for k in POOL_OPTIONAL:
                    d.pop(k, None)
        keys = list(d)
        if r.random() < 0.3:
            r.shuffle(keys)
        value = text([(k, d[k]) for k in keys])
        th, st = d.get("autoextend_threshold", "0"), d.get("autoextend_step")
        exp = {"id": d["id"], "created": iso(int(d["created"])),
               "autoextend_threshold": None if th == "0" else th,
               "autoextend_step": "20%" if st is None else st,
               "autoextend_max": int(d.get("autoextend_max", "0")) or None,
               "autoextend_command": d.get("autoextend_command") or None}
        return Case("pool", value, "valid", exp)
    kind = r.choice(["common"] * 5 + ["not_number", "overflow", "percent", "command_long",
                                      "bad_name", "bad_id", "binary_value"])
    if kind == "common":
        kind, value = common_defect(g, list(pairs), POOL_KEYS, POOL_OPTIONAL)
        return Case("pool", value, kind)
    if kind == "not_number":
        d[r.choice(["created", "autoextend_max", "autoextend_threshold",
                    "autoextend_step"])] = r.choice(NOT_NUMBERS + ["5%%", "%", "-5%", " 5%"])
    elif kind == "overflow":
        key = r.choice(["created", "autoextend_max", "autoextend_threshold", "autoextend_step"])
        d[key] = r.choice(OVER + [str(INT64_MAX + 1)] * (key == "created"))
    elif kind == "percent":
        d[r.choice(["autoextend_threshold", "autoextend_step"])] = r.choice(
            ["0%", "1001%", "18446744073709551616%", "99999999999999999999999%"])
        if r.random() < 0.5:
            d["autoextend_threshold"] = r.choice(["100%", "0%", "150%"])
    elif kind == "command_long":
        d["autoextend_command"] = "c" * r.randint(1025, 3000)
    elif kind == "bad_name":
        d["name"] = r.choice(["", "-x", ".x", "a/b", "x" * 65, "a b", "..", "."])
    elif kind == "bad_id":
        h = g.hexid()
        d["id"] = r.choice(["", h[:31], h + "a", h[:-1] + "z", h.upper() if h != h.upper() else "Z"])
    else:
        key = r.choice(["name", "id", "created"])
        v = d[key]
        pos = r.randint(0, len(v))
        d[key] = v[:pos] + r.choice(["\x01", "\x7f", "\x1b", "\t", "\x0b"]) + v[pos:]
    return Case("pool", text([(k, d[k]) for k in d]), kind)


def monitor_case(g, valid):
    r = g.rng
    d = {"extensions": "0", "last_extension_time": "0", "last_extension": "",
         "last_command_time": "0", "last_command": "", "last_error_time": "0",
         "last_error": ""}
    for k in d:
        if r.random() < 0.6:
            d[k] = str(g.number(U64 - 1 if k == "extensions" else LATEST)) \
                if not k.endswith(("extension", "command", "error")) or k.endswith("_time") \
                else r.choice(["", g.printable(1, 400), "lvextend -L +1G vg/lv: 1G -> 2G"])
    if valid:
        if r.random() < 0.2:
            d[g.unknown_key(MON_KEYS)] = g.printable(0, 50)
        keys = list(d)
        if r.random() < 0.3:
            r.shuffle(keys)
        exp = {"extensions": int(d["extensions"])}
        for k in ("last_extension", "last_command", "last_error"):
            exp[k] = d[k] or None
            exp[k + "_time"] = iso(int(d[k + "_time"]))
        return Case("monitor", text([(k, d[k]) for k in keys]), "valid", exp)
    kind = r.choice(["common"] * 5 + ["not_number", "overflow", "text_long"])
    if kind == "common":
        kind, value = common_defect(g, list(d.items()), MON_KEYS, set())
        return Case("monitor", value, kind)
    times = ["extensions", "last_extension_time", "last_command_time", "last_error_time"]
    if kind == "not_number":
        d[r.choice(times)] = r.choice(NOT_NUMBERS)
    elif kind == "overflow":
        d[r.choice(times)] = r.choice(OVER + [str(INT64_MAX + 1)])
        if d["extensions"] == str(INT64_MAX + 1):
            d["extensions"] = str(U64)
    else:
        d[r.choice(["last_extension", "last_command", "last_error"])] = "t" * r.randint(401, 3000)
    return Case("monitor", text(list(d.items())), kind)


def seal_case(g, good, valid):
    r = g.rng
    if valid:
        return Case("seal", good, "valid", {})
    sec, ns = good.decode()[6:-1].split(".")
    kind = r.choice(["stale", "missing_newline", "empty", "nul", "extra_line", "short_ns",
                     "not_number", "too_long", "binary", "absent", "no_key"])
    v = {
        "stale": lambda: "ctime=%s.%09d\n" % (sec, (int(ns) + r.choice([1, -1, 1000])) % 10**9),
        "missing_newline": lambda: good.decode()[:-1],
        "empty": lambda: "",
        "nul": lambda: good.decode()[:-1] + "\0\n",
        "extra_line": lambda: good.decode() + r.choice(["x=1\n", "ctime=1.000000000\n", "\n"]),
        "short_ns": lambda: "ctime=%s.%s\n" % (sec, ns[:-1]),
        "not_number": lambda: "ctime=%s.%s\n" % (sec, r.choice(["x" * 9, "-" + ns[1:], ns + "0"])),
        "too_long": lambda: "ctime=%s.%s\n" % (sec, ns) + "x" * r.randint(64, 500),
        "binary": lambda: "ctime=%s\x01.%s\n" % (sec, ns),
        "absent": lambda: None,
        "no_key": lambda: "%s.%s\n" % (sec, ns),
    }[kind]()
    return Case("seal", None if v is None else v.encode(), kind)


# --- the pool ----------------------------------------------------------

class Fuzz:
    def __init__(self, work, subvol, tool, out):
        self.work, self.subvol, self.tool, self.out = work, subvol, tool, out
        self.x = os.path.join(work, "mnt")
        self.p = os.path.join(self.x, "p")
        self.env = dict(os.environ, TZ="UTC", SUBVOL_CONFIG_DIR=os.path.join(work, "config"),
                        SUBVOL_LOCK_TIMEOUT="10")

    def sv(self, *args):
        r = subprocess.run([self.subvol] + list(args), env=self.env, capture_output=True)
        if r.returncode:
            sys.exit("fuzz-xattr: subvol %s: %s" % (" ".join(args), r.stderr.decode().strip()))

    def img(self, name):
        return os.path.join(self.p, name + ".img")

    def setup(self):
        sv = self.sv
        sv("pool", "create", self.p)
        sv("pool", "create", os.path.join(self.x, "q"))
        sv("create", "--inactive", "--size", "4M", "p/v")
        fd = os.open(self.img("v"), os.O_WRONLY)
        os.pwrite(fd, b"\x11" * 65536, 0)
        os.pwrite(fd, os.urandom(16384), 1 << 20)
        sv("snapshot", "p/v", "s1")
        os.pwrite(fd, b"\x22" * 8192, 2 << 20)
        os.close(fd)
        sv("snapshot", "p/v", "s2")
        sv("clone", "p/s1", "c1")
        sv("create", "--inactive", "--size", "8M", "--guarantee", "none", "--no-space", "queue",
           "--no-space-timeout", "30", "--low-water", "1M", "--extent-size", "64K", "p/w")
        sv("create", "--inactive", "--size", "4M", "q/u")
        self.volumes = ["c1", "s1", "s2", "v", "w"]
        self.orig = {n: os.getxattr(self.img(n), VOL_ATTR) for n in self.volumes}
        self.pool_orig = os.getxattr(self.p, POOL_ATTR)
        self.s1_id = dict(parse(self.orig["s1"]))["id"]
        self.seal_attr = SEAL_PREFIX + self.s1_id

    # Writing an attribute: a snapshot's image is immutable, and its seal
    # is its ctime, which the flag's change moves: sealed anew.
    def set_volume(self, name, value):
        path = self.img(name)
        snap = flags(path) & FS_IMMUTABLE_FL
        if snap:
            flags(path, False)
        os.setxattr(path, VOL_ATTR, value)
        if snap:
            flags(path, True)
            self.reseal(name)

    def seal_text(self, name):
        s, n = divmod(os.stat(self.img(name)).st_ctime_ns, 10**9)
        return ("ctime=%d.%09d\n" % (s, n)).encode()

    def reseal(self, name):
        os.setxattr(self.p, SEAL_PREFIX + dict(parse(self.orig[name]))["id"], self.seal_text(name))

    def write(self, case):
        t = case.target
        if t == "pool":
            os.setxattr(self.p, POOL_ATTR, case.value)
        elif t == "monitor":
            os.setxattr(self.p, MON_ATTR, case.value)
        elif t.startswith("record:"):
            os.setxattr(self.img(t[7:]), RECORD_ATTR, case.value)
        elif t == "seal":
            if case.value is None:
                os.removexattr(self.p, self.seal_attr)
            else:
                os.setxattr(self.p, self.seal_attr, case.value)
        else:
            self.set_volume(t, case.value)

    def restore(self):
        """Everything as set up: stray images gone, attributes as they were."""
        for f in os.listdir(self.p):
            n = f[:-4]
            if f.endswith(".img") and n not in self.volumes:
                if n == "fz" and not os.path.exists(self.img(n)):
                    continue
                missing = [v for v in self.volumes if not os.path.exists(self.img(v))]
                path = os.path.join(self.p, f)
                if flags(path) & FS_IMMUTABLE_FL:
                    flags(path, False)
                if missing:	# a rename that should not have been
                    os.rename(path, self.img(missing[0]))
                    if missing[0].startswith("s"):
                        flags(self.img(missing[0]), True)
                else:
                    os.unlink(path)
        cfg = os.path.join(self.work, "config", "pools")
        for n in os.listdir(cfg):
            if n not in ("p", "q"):	# a pool made anew over one
                os.unlink(os.path.join(cfg, n))
        for n in self.volumes:
            if RECORD_ATTR in os.listxattr(self.img(n)):
                os.removexattr(self.img(n), RECORD_ATTR)
            if os.getxattr(self.img(n), VOL_ATTR) != self.orig[n]:
                self.set_volume(n, self.orig[n])
        if os.getxattr(self.p, POOL_ATTR) != self.pool_orig:
            os.setxattr(self.p, POOL_ATTR, self.pool_orig)
        for a in os.listxattr(self.p):
            if a == MON_ATTR or (a.startswith(SEAL_PREFIX) and a not in self.seals):
                os.removexattr(self.p, a)
        for n in ("s1", "s2"):
            try:
                seal = os.getxattr(self.p, SEAL_PREFIX + dict(parse(self.orig[n]))["id"])
            except OSError:
                seal = None
            if seal != self.seal_text(n):
                self.reseal(n)

    def state(self):
        """What a refused command must not change: names, times, flags, attributes."""
        out = []
        cfg = os.path.join(self.work, "config", "pools")
        out.append(("registry", sorted((n, os.readlink(os.path.join(cfg, n)))
                                       for n in os.listdir(cfg))))
        for d in (self.p, os.path.join(self.x, "q")):
            for f in [""] + sorted(os.listdir(d)):
                path = os.path.join(d, f) if f else d
                st = os.lstat(path)
                xa = sorted((a, os.getxattr(path, a, follow_symlinks=False))
                            for a in os.listxattr(path, follow_symlinks=False))
                out.append((path, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns,
                            flags(path) if f.endswith(".img") else 0, xa))
        return out


def diff_state(a, b):
    da, db = {x[0]: x for x in a}, {x[0]: x for x in b}
    said = []
    for k in sorted(set(da) | set(db)):
        if k not in db:
            said.append("%s is gone" % k)
        elif k not in da:
            said.append("%s appeared" % k)
        elif da[k] != db[k]:
            what = ["size", "mode", "mtime", "ctime", "flags", "attributes"]
            said.append("%s: %s changed" % (k, ", ".join(
                w for w, x, y in zip(what, da[k][1:], db[k][1:]) if x != y)))
    return "; ".join(said)


# --- the commands and the oracle ---------------------------------------

def commands(target):
    """(argv, what it shows): what reads the attribute of target."""
    if target == "pool":
        return [(["list", "-J", "-b", "-o", VOL_COLS, "p"], "list"),
                (["list", "-n", "-o", "pool,name"], "all"),
                (["pool", "status", "-J", "-b", "p"], "pool"),
                (["pool", "list", "-n", "-o", "name"], "pools"),
                (["status", "p/v"], None),
                (["snapshot", "p/v", "fz"], "made"),
                (["create", "--inactive", "--size", "4M", "p/fz"], "made"),
                # By its path (@P): a pool already, or a directory whose
                # attribute cannot be read, which is not to be made anew.
                (["pool", "create", "--name", "fz", "@P"], "again"),
                (["pool", "import", "@P"], None),
                (["monitor", "--once"], None)]
    if target == "monitor":
        return [(["pool", "status", "-J", "-b", "p"], "pool"),
                (["pool", "list", "-n", "-o", "name"], "pools"),
                (["monitor", "--once"], None)]
    if target == "seal":
        return [(["send", "--from", "s1", "p/s2"], None)]
    if target.startswith("record:"):
        name = target[7:]
        return [(["list", "-J", "-b", "-o", VOL_COLS, "p"], "list"),
                (["status", "-J", "-b", "p/" + name], None),
                (["snapshot", "p/" + name, "fz"], "made")]
    cmds = [(["list", "-J", "-b", "-o", VOL_COLS, "p"], "list"),
            (["list", "-n", "-o", "pool,name"], "all"),
            (["status", "-J", "-b", "p/" + target], "status"),
            (["pool", "status", "-J", "-b", "p"], None),
            (["rename", "p/" + target, "fz"], "defect only")]
    if target.startswith("s"):
        cmds += [(["clone", "p/" + target, "fz"], "made"),
                 (["send", "p/" + target], None),
                 (["send", "--from", target, "p/s2"], None),
                 (["diff", "p/" + target, "p/s2"], None)]
    else:
        cmds += [(["snapshot", "p/" + target, "fz"], "made"),
                 (["diff", "p/s2", "p/" + target], None)]
    return cmds


def names_of(target):
    """What a refusal's line must name: the object and the attribute."""
    if target == "pool":
        return ("pool p", "pool @P"), POOL_ATTR
    if target == "monitor":
        return ("pool p",), MON_ATTR
    if target == "seal":
        return ("p/s1",), SEAL_PREFIX
    return ("p/" + target,), VOL_ATTR


FAILURES = ["crashed", "hung", "accepted", "wrong_status", "multiline", "unnamed",
            "changed", "others_missing", "refused_valid", "misreported", "record_kept"]


def main():
    work, subvol, tool, iterations, seed, out = sys.argv[1:7]
    iterations, seed = int(iterations), int(seed)
    fz = Fuzz(work, subvol, tool, out)
    fz.setup()
    fz.seals = [a for a in os.listxattr(fz.p) if a.startswith(SEAL_PREFIX)]
    rng = random.Random(seed)
    g = Gen(rng)
    counts = {k: 0 for k in FAILURES}
    kinds, refusals, ran = {}, {}, 0
    valid_n = defect_n = 0
    failed_iters = 0
    start = time.time()
    all_listed = {("p", n) for n in fz.volumes} | {("q", "u")}
    # SIGTERM or SIGINT: stop after the value under way, with the figures.
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    done = 0

    for i in range(iterations):
        if stop:
            break
        done += 1
        target = rng.choice(["v", "c1", "w", "s1", "v", "c1", "w", "s1", "pool", "pool",
                             "monitor", "monitor", "seal", "record:v", "record:c1"])
        valid = rng.random() < 0.35 or target.startswith("record:")
        if target.startswith("record:"):
            # The target's own: the tool reads none of it, drops it before a clone.
            case = Case(target, bytes(rng.getrandbits(8) for _ in range(
                rng.choice([0, 1, 16, rng.randint(0, 4000)]))), "any")
        elif target == "pool":
            case = pool_case(g, parse(fz.pool_orig), valid)
        elif target == "monitor":
            case = monitor_case(g, valid)
        elif target == "seal":
            case = seal_case(g, fz.seal_text("s1"), valid)
        else:
            case = volume_case(g, target, parse(fz.orig[target]), valid)
        what = target.split(":")[0] if target in ("pool", "monitor", "seal") or \
            ":" in target else "volume"
        kinds[(what, case.kind)] = kinds.get((what, case.kind), 0) + 1
        if valid:
            valid_n += 1
        else:
            defect_n += 1
        fz.write(case)
        obj, attr = names_of(target)
        failures = []

        def fail(what, why, argv):
            counts[what] += 1
            failures.append("%s: subvol %s: %s" % (what, " ".join(map(shlex.quote, argv)), why))

        for argv, shows in commands(target):
            if valid and shows == "defect only":
                continue
            argv = [fz.p if a == "@P" else a for a in argv]
            before = fz.state()
            ran += 1
            try:
                r = subprocess.run([tool] + argv, env=fz.env, capture_output=True, timeout=60)
                st, so, se = r.returncode, r.stdout, r.stderr.decode(errors="replace")
            except subprocess.TimeoutExpired:
                fail("hung", "no end in 60 s", argv)
                continue
            # Lines as a terminal shows them: a control byte (a vertical
            # tab, an escape) read from the attribute is no part of one.
            lines = se.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            if SANITIZER.search(se) or st in (98, 99):
                m = SANITIZER.search(se)
                fail("crashed", "sanitizer report: " +
                     (se[m.start():].splitlines()[0] if m else "exit %d" % st), argv)
                continue
            if st < 0 or st > 2:
                sig = -st if st < 0 else st - 128
                fail("crashed", "exit %d%s" % (st if st > 0 else 128 + sig,
                                               " (signal %d)" % sig if st < 0 or st > 128 else ""),
                     argv)
                continue
            listed = None
            if shows in ("all", "pools") and st in (0, 1):
                got = set(tuple(l.split()) for l in so.decode(errors="replace").splitlines())
                want = {(pl, n) for pl, n in all_listed if target not in ("pool",) or pl != "p"}
                if target not in ("pool", "monitor", "seal") and not valid:
                    want.discard(("p", target))
                if shows == "pools":
                    got = {x[0] for x in got}
                    want = {"q"} | ({"p"} if target != "pool" else set())
                listed = want - got
            if valid and shows == "again":
                if st != 1 or len(lines) != 1 or "already a pool" not in se:
                    fail("misreported", "not refused as a pool already: exit %d: %s" % (
                        st, se.strip()[:300]), argv)
                if before != fz.state():
                    fail("changed", diff_state(before, fz.state()), argv)
                continue
            if valid:
                if st != 0 or se:
                    fail("refused_valid", "exit %d: %s" % (st, se.strip()[:300]), argv)
                    continue
                if listed:
                    fail("others_missing", "does not list %s" % sorted(listed), argv)
                why = check_report(fz, case, shows, so)
                if why:
                    fail("misreported", why, argv)
                if shows == "made" and target.startswith("record:"):
                    kept = [n for n in (target[7:], "fz")
                            if RECORD_ATTR in os.listxattr(fz.img(n))]
                    if kept:
                        fail("record_kept", "%s still on %s after the clone" %
                             (RECORD_ATTR, " and ".join(kept)), argv)
                if shows == "made":
                    fz.sv("remove", "p/fz")
                continue
            # A defect: refused, in one line naming both, nothing changed.
            after = fz.state()
            if st == 0:
                fail("accepted", "exit 0, stderr %r" % se.strip()[:200], argv)
            elif st != 1:
                fail("wrong_status", "exit %d, not 1: %s" % (st, se.strip()[:200]), argv)
            elif len(lines) != 1 or CONTROL.search(lines[0]):
                fail("multiline", "%d lines on stderr%s: %r" % (
                    len(lines), ", control bytes" if len(lines) == 1 else "", se[:400]), argv)
            elif not any(o.replace("@P", fz.p) in lines[0] for o in obj) or \
                    attr not in lines[0]:
                fail("unnamed", "the line does not name %s and %s: %s" % (
                    " or ".join(obj).replace("@P", fz.p), attr, lines[0]), argv)
            else:
                key = re.sub(r"/\S*/mnt/\S*", "PATH", lines[0])
                key = re.sub(r"\bp/[\w.+-]+", "p/NAME", key)
                key = re.sub(r"[0-9a-f]{32}", "ID", key)
                key = re.sub(r"[0-9]+", "N", key)
                key = re.sub(r'"[^"]*"', '"..."', key)
                refusals[key] = refusals.get(key, 0) + 1
            if before != after:
                fail("changed", diff_state(before, after), argv)
            if listed:
                fail("others_missing", "does not list %s" % sorted(listed), argv)
            if shows == "list" and st in (0, 1):
                try:
                    names = {v["name"] for v in json.loads(so)["volumes"]}
                    missing = set(fz.volumes) - {target} - names
                    if target not in ("pool", "monitor", "seal") and missing:
                        fail("others_missing", "does not list %s" % sorted(missing), argv)
                except (ValueError, KeyError) as e:
                    if target not in ("pool",):
                        fail("others_missing", "no JSON list: %s" % e, argv)
            if before != after or st == 0:
                fz.restore()
        if failures:
            failed_iters += 1
            v = case.value
            where = {"pool": (POOL_ATTR, fz.p), "monitor": (MON_ATTR, fz.p),
                     "seal": (fz.seal_attr, fz.p)}.get(target, (VOL_ATTR, fz.img(target))
                                                       if ":" not in target else
                                                       (RECORD_ATTR, fz.img(target[7:])))
            print("fuzz-xattr: iteration %d (%s, %s):" % (i, target, case.kind), file=sys.stderr)
            print("  value: %s" % ("(removed)" if v is None else esc(v)), file=sys.stderr)
            print("  set by: %s" % ("setfattr -x %s %s" % where if v is None else
                                    "setfattr -n %s -v 0x%s %s" % (where[0], v.hex(), where[1])),
                  file=sys.stderr)
            for f in failures:
                print("  " + f, file=sys.stderr)
            if out:
                os.makedirs(out, exist_ok=True)
                with open(os.path.join(out, "case.%d" % i), "w") as f:
                    f.write("target %s %s\nattribute %s\nfile %s\nvalue %s\n" %
                            (target, case.kind, where[0], where[1],
                             "-" if v is None else esc(v)))
                    f.write("\n".join(failures) + "\n")
        fz.restore()
        if iterations >= 5000 and (i + 1) % 1000 == 0:
            print("fuzz-xattr: %d of %d values, %d failed, %.0f s" %
                  (i + 1, iterations, failed_iters, time.time() - start),
                  file=sys.stderr, flush=True)

    secs = time.time() - start
    print("fuzz-xattr: %d attribute values, seed %d: %d valid by construction, %d with one defect%s"
          % (done, seed, valid_n, defect_n,
             " (stopped by a signal after %d of %d)" % (done, iterations) if stop else ""))
    print("  tool: %s%s" % (tool, os.environ.get("FUZZ_ASAN", "")))
    print("  %d commands run, %.1f s, %.1f values a second"
          % (ran, secs, done / secs if secs else 0))
    labels = {"crashed": "crashed (signal, exit > 2, sanitizer)", "hung": "no end in 60 s",
              "accepted": "a defect accepted (exit 0)",
              "wrong_status": "a defect refused with a status other than 1",
              "multiline": "refused with other than one line (or control bytes)",
              "unnamed": "refused without naming the object and attribute",
              "changed": "refused, but something changed on disk",
              "others_missing": "other volumes or pools not listed",
              "refused_valid": "a valid value refused",
              "misreported": "a valid value reported otherwise",
              "record_kept": "a sharing record left on a clone's source or clone"}
    print("  commands that failed, by the oracle's rule:")
    for k in FAILURES:
        print("  %-56s %6d" % (labels[k] + ":", counts[k]))
    print("  values by attribute and kind:")
    for (t, k), n in sorted(kinds.items(), key=lambda x: (x[0][0], -x[1])):
        print("  %6d  %s %s" % (n, t, k))
    print("  the refusals' messages, most common first (names as p/NAME and PATH, numbers as N,"
          " quoted text as \"...\"):")
    for key, n in sorted(refusals.items(), key=lambda x: -x[1]):
        print("  %6d  %s" % (n, key))
    print("%d passed, %d failed" % (done - failed_iters, failed_iters))
    sys.exit(1 if failed_iters else 0)


def check_report(fz, case, shows, so):
    """Why what the command printed is not what the valid value holds; ""."""
    exp = case.expect
    if exp is None:
        return ""
    try:
        if shows == "list" and case.target not in ("pool", "monitor", "seal"):
            rows = {v["name"]: v for v in json.loads(so)["volumes"]}
            row = rows.get(case.target)
            if row is None:
                return "%s is not listed" % case.target
        elif shows == "status":
            row = json.loads(so)["volume"][0]
        elif shows == "pool" and case.target in ("pool", "monitor"):
            row = json.loads(so)["pool"][0]
        else:
            return ""
    except (ValueError, KeyError, IndexError) as e:
        return "no report: %s" % e
    bad = ["%s %r, not %r" % (k, row.get(k), v) for k, v in exp.items() if row.get(k) != v]
    return "; ".join(bad)


if __name__ == "__main__":
    main()
