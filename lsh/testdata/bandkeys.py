#!/usr/bin/env python3
"""Independent implementation of the lsh band-key function, written from the
doc comment of Params.AppendKeys, which writes the golden vectors in
bandkeys.golden. Run: python3 bandkeys.py > bandkeys.golden"""

from itertools import combinations

M = (1 << 64) - 1
P1, P2, P3, P5 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5


def rotl(x, n):
    return ((x << n) | (x >> (64 - n))) & M


def rnd(a, x):
    return (rotl((a + x * P2) & M, 31) * P1) & M


def final(h):
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    h ^= h >> 32
    return h


def keys(bands, rows, probe, slots):
    out = []
    for i in range(bands):
        band = slots[i * rows:(i + 1) * rows]
        for omitted in combinations(range(rows), probe):
            h = rnd(P5, i)
            h = rnd(h, len(omitted))
            for p in omitted:
                h = rnd(h, p)
            for j in range(rows):
                if j not in omitted:
                    h = rnd(h, band[j])
            out.append(final(h))
    return out


def slot_sets(n):
    yield "zeros", [0] * n
    yield "count", list(range(n))
    yield "mixed", [(i * 0x9E3779B97F4A7C15 + 0x0123456789ABCDEF) & M for i in range(n)]
    yield "bbit", [(i * 7) % 4 for i in range(n)]  # 2-bit slot values


CASES = [(1, 1, 0), (1, 3, 0), (2, 3, 0), (4, 4, 0), (9, 13, 0), (3, 4, 1), (2, 5, 2)]

print("# bands rows probe name : slots (hex) : keys (hex); written by bandkeys.py")
for b, r, m in CASES:
    for name, s in slot_sets(b * r):
        print(f"{b} {r} {m} {name} : {' '.join(f'{v:x}' for v in s)} : {' '.join(f'{k:x}' for k in keys(b, r, m, s))}")
