#!/usr/bin/env python3
"""Independent reader of signature files, written from docs/signature-format.md
§6–§8 (not from the Go code). It reads every golden signature file listed in
sigfiles.json, checks every checksum, unpacks the records, widens the slots,
computes the band keys and batch entries of §7 and compares all of it with
sigfiles.json. XXH3 comes from the system's libxxhash through ctypes; without
it the script exits with status 77 (the Go test then skips).

Run: python3 sigfile.py ../../testdata/golden"""

import ctypes
import ctypes.util
import json
import os
import sys
from itertools import combinations

M = (1 << 64) - 1
P1, P2, P3, P5 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5


def load_xxh3():
    for name in ("libxxhash.so.0", ctypes.util.find_library("xxhash")):
        if not name:
            continue
        try:
            f = ctypes.CDLL(name).XXH3_64bits_withSeed
        except (OSError, AttributeError):
            continue
        f.restype = ctypes.c_uint64
        f.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
        return lambda b, seed=0: f(bytes(b), len(b), seed)
    print("libxxhash not found", file=sys.stderr)
    sys.exit(77)


xxh3 = load_xxh3()


def le(b):
    return int.from_bytes(b, "little")


def le64(x):
    return x.to_bytes(8, "little")


def uvarint(b, p):
    x, s, start = 0, 0, p
    while True:
        c = b[p]
        p += 1
        x |= (c & 0x7F) << s
        if c < 0x80:
            break
        s += 7
    shortest = max(1, (x.bit_length() + 6) // 7)
    if p - start != shortest or x >= 65536:
        raise ValueError("bad id length")
    return x, p


def read(path):
    b = open(path, "rb").read()
    if b[:4] != b"NDSF" or b[4] != 1:
        raise ValueError("not a format 1 signature file")
    if b[6:8] != b"\0\0" or b[13:16] != b"\0\0\0":
        raise ValueError("flags or reserved bytes")
    h = {"sketch": {1: "minhash", 2: "simhash"}[b[5]], "slots": le(b[8:12]), "bits": b[12],
         "block_bytes": le(b[16:20]), "shard": le(b[20:24]), "shards": le(b[24:28])}
    ls = le(b[28:30])
    h["spec"] = b[30:30 + ls].decode()
    p = 30 + ls
    lp = le(b[p:p + 2])
    h["params"] = b[p + 2:p + 2 + lp].decode()
    p += 2 + lp
    hsum = le(b[p:p + 8])
    if xxh3(b[:p]) != hsum:
        raise ValueError("header checksum")
    p += 8
    S = (h["slots"] * h["bits"] + 7) // 8
    c, records, j = hsum, [], 0
    while True:
        n, L = le(b[p:p + 4]), le(b[p + 4:p + 8])
        if n == 0:
            break
        if not (L <= h["block_bytes"] or n == 1):
            raise ValueError("block too large")
        end = p + 8 + L
        s = le(b[end:end + 8])
        if xxh3(b[p:end], j) != s:
            raise ValueError(f"block {j} checksum")
        c = xxh3(le64(c) + le64(s))
        q = p + 8
        for _ in range(n):
            l, q = uvarint(b, q)
            rid = b[q:q + l]
            q += l
            records.append((rid, b[q:q + S]))
            q += S
        if q != end:
            raise ValueError(f"block {j} length")
        p, j = end + 8, j + 1
    if b[p + 4:p + 8] != b"NDSE":
        raise ValueError("trailer magic")
    N, fsum = le(b[p + 8:p + 16]), le(b[p + 16:p + 24])
    if N != len(records) or xxh3(le64(c) + le64(N)) != fsum or p + 24 != len(b):
        raise ValueError("trailer")
    return h, records


def slots(sig, k, bits):
    words = [le(sig[i:i + 8]) for i in range(0, len(sig), 8)]
    if (k * bits) % 8:
        last = sig[-1] >> ((k * bits) % 8)
        if last:
            raise ValueError("padding bits")
    return [(words[(i * bits) // 64] >> ((i * bits) % 64)) & ((1 << bits) - 1) for i in range(k)]


def rnd(a, x):
    v = (a + x * P2) & M
    return (((v << 31) | (v >> 33)) & M) * P1 & M


def final(h):
    h ^= h >> 33
    h = h * P2 & M
    h ^= h >> 29
    h = h * P3 & M
    h ^= h >> 32
    return h


def band_keys(v, b, r, m):
    out = []
    for i in range(b):
        for omitted in combinations(range(r), m):
            h = rnd(rnd(P5, i), len(omitted))
            for p in omitted:
                h = rnd(h, p)
            for j in range(r):
                if j not in omitted:
                    h = rnd(h, v[i * r + j])
            out.append(final(h))
    return out


def main(golden):
    desc = json.load(open(os.path.join(golden, "sigfiles.json")))
    for g in desc:
        h, records = read(os.path.join(golden, g["file"]))
        for field in ("sketch", "spec", "params", "block_bytes", "shard", "shards"):
            assert h[field] == g[field], (g["file"], field, h[field], g[field])
        assert xxh3(h["spec"].encode()) == int(g["spec_fingerprint"], 16), g["file"]
        assert xxh3(h["params"].encode()) == int(g["params_fingerprint"], 16), g["file"]
        assert len(records) == len(g["records"]), g["file"]
        for doc, ((rid, sig), want) in enumerate(zip(records, g["records"])):
            assert rid.decode() == want["id"] and sig.hex() == want["signature"], (g["file"], doc)
            v = slots(sig, h["slots"], h["bits"])
            assert [f"{x:016x}" for x in v] == want["slots"], (g["file"], doc)
            if "bands" in g:
                b, r = (int(t[2:]) for t in g["bands"].split())
                keys = band_keys(v, b, r, 0)
                assert [f"{k:016x}" for k in keys] == want["band_keys"], (g["file"], doc)
                entries = [(k & 0xFFFFFFFF00000000) | doc for k in keys]
                assert [f"{e:016x}" for e in entries] == want["entries"], (g["file"], doc)
        print(f"{g['file']}: {len(records)} records ok")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../../testdata/golden")
