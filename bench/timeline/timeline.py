#!/usr/bin/env python3
"""timeline.py SAMPLES REPORT.json [STEP]: per stage and per STEP seconds: CPU used (cores) and
runnable threads (capped at 2: the parallelism the process offers, whatever else runs)."""
import json, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))
stages = [(t['stage'], t['seconds']) for t in rep['timings']]
end = rows[-1][0]
total = sum(s for _, s in stages)
start = end - total
b = []; t = start
for name, s in stages:
    b.append((name, t, t + s)); t += s
def cpu_at(x):
    prev = rows[0]
    for r in rows:
        if r[0] >= x:
            if r[0] == prev[0]: return r[1]
            return prev[1] + (r[1]-prev[1])*(x-prev[0])/(r[0]-prev[0])
        prev = r
    return rows[-1][1]
def runnable(a, z):
    v = [min(r[2], 2) for r in rows if a <= r[0] < z]
    return sum(v)/len(v) if v else float('nan')
def below(a, z, k):
    v = [r for r in rows if a <= r[0] < z]
    return sum(1 for r in v if r[2] < k)/len(v) if v else float('nan')
print('| stage | start s | wall s | CPU s | CPU / wall | runnable threads (≤ 2) | time with < 2 runnable |')
print('|---|---|---|---|---|---|---|')
print(f'| (start) | 0.0 | {start:.1f} | {cpu_at(start):.1f} | | {runnable(0,start):.2f} | {below(0,start,2):.0%} |')
for name, a, z in b:
    c = cpu_at(z) - cpu_at(a)
    print(f'| {name} | {a:.1f} | {z-a:.1f} | {c:.1f} | {c/(z-a):.2f} | {runnable(a,z):.2f} | {below(a,z,2):.0%} |')
print()
step = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
x = 0.0
while x < end:
    y = min(x+step, end)
    st = [n for n, a, z in b if a <= x < z]
    print(f'{x:5.1f}-{y:5.1f} cpu {(cpu_at(y)-cpu_at(x))/(y-x):.2f} run {runnable(x,y):.2f} {st[0] if st else "-"}')
    x = y
