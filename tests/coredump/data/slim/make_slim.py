#!/usr/bin/env python3
"""Slim copies of the real dumps in tests/coredump/data, for fuzz seeds (libFuzzer's
-max_len is 256 KiB) and for tests that want the same site from fewer bytes: the relocated
images other than the faulting kernel's (the driver's own memcpy/memset/graph modules) are
emptied (size 0) and the file is rewritten with the same section table. The site read from
a slim dump must equal the full dump's (tests/coredump/test_slim.cpp).

    tests/coredump/data/slim/make_slim.py   # rewrites slim/*.nvcudmp
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
RELF = 0x80000007


def slim(src, dst):
    f = open(src, "rb").read()
    shoff, = struct.unpack_from("<Q", f, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", f, 0x3A)
    secs = [list(struct.unpack_from("<IIQQQQIIQQ", f, shoff + i * shentsize)) for i in range(shnum)]
    # The kernel's image: the one whose bytes hold an STO_CUDA_ENTRY function named _Z...
    # (the driver's modules have C names); keep every relocated image with "_Z" in it.
    out = bytearray(f[:64])
    for s in secs[1:]:
        name, typ, flags, addr, off, size, link, info, align, entsize = s
        data = f[off:off + size]
        if typ == RELF and b"_Z" not in data:
            data = b""
        s[4] = len(out) if data else 0
        s[5] = len(data)
        out += data
    new_shoff = len(out)
    for s in secs:
        out += struct.pack("<IIQQQQIIQQ", *s)
    struct.pack_into("<Q", out, 0x28, new_shoff)
    open(dst, "wb").write(out)


for name in sorted(os.listdir(DATA)):
    if name.endswith(".nvcudmp"):
        slim(os.path.join(DATA, name), os.path.join(HERE, name))
        print(name, os.path.getsize(os.path.join(HERE, name)))
