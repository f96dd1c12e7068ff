#!/usr/bin/env python3
"""perfwin.py PERF.data COMM SAMPLES REPORT.json STEP: per STEP window of a perf record -g run:
runnable threads (from cpusample), samples of COMM, and the top work labels (innermost frame of
package dedup, else of another neardup package, else runtime GC/scheduler)."""
import json, subprocess, sys, collections, re
data, comm, samples, report, step = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
out = subprocess.run(['perf', 'script', '-i', data, '-F', 'comm,tid,time,ip,sym'], capture_output=True, text=True).stdout
recs = []; cur = None; t0 = None
for line in out.split('\n'):
    if not line.strip():
        continue
    if not line.startswith('\t') and not line.startswith(' '):
        m = re.match(r'\s*(\S+)\s+(\d+)\s+([\d.]+):', line)
        if not m: continue
        c, tid, t = m.group(1), int(m.group(2)), float(m.group(3))
        if t0 is None: t0 = t
        cur = [c, tid, t - t0, []]; recs.append(cur)
    else:
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and cur is not None: cur[3].append(parts[1])
def label(frames):
    short = lambda f: re.sub(r'\[go\.shape[^\]]*\]', '', f.replace('github.com/neardup/neardup/', ''))
    for f in frames:
        if f.startswith('github.com/neardup/neardup/dedup.'):
            return short(f)
    for f in frames:
        if f.startswith('github.com/neardup/neardup/'):
            return short(f)
    for f in frames:
        if 'gcBgMarkWorker' in f or 'gcDrain' in f: return 'runtime GC'
        if f.startswith('runtime.'): return 'runtime (' + f + ')'
    return frames[0] if frames else '?'
rows = [tuple(map(float, l.split())) for l in open(samples)]
rep = json.load(open(report))
stages = [(t['stage'], t['seconds']) for t in rep['timings']]
end = rows[-1][0]; start = end - sum(s for _, s in stages)
bounds = []; t = start
for n, s in stages: bounds.append((n, t, t+s)); t += s
def runnable(a, z):
    v = [min(r[2], 2) for r in rows if a <= r[0] < z]
    return sum(v)/len(v) if v else float('nan')
x = 0.0
mine = [r for r in recs if r[0] == comm]
while x < end:
    y = x + step
    w = [r for r in mine if x <= r[2] < y]
    st = [n for n, a, z in bounds if a <= x < z]
    cnt = collections.Counter(label(r[3]) for r in w)
    top = ', '.join(f'{k} {v}' for k, v in cnt.most_common(3))
    print(f'{x:6.1f} run {runnable(x, y):.2f} samples {len(w):4d} {st[0] if st else "-":10s} {top}')
    x = y
