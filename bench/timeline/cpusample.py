#!/usr/bin/env python3
"""cpusample.py -o OUT CMD...: run CMD, every 20 ms read its CPU time (utime+stime,
/proc/PID/stat) and how many of its threads are runnable (state R in /proc/PID/task/*/stat).
OUT: one line per sample: t_seconds cpu_seconds runnable_threads."""
import os, subprocess, sys, time
out = sys.argv[2]; cmd = sys.argv[3:]
tck = os.sysconf('SC_CLK_TCK')
t0 = time.monotonic()
p = subprocess.Popen(cmd)
rows = []
pid = p.pid
while p.poll() is None:
    try:
        with open(f'/proc/{pid}/stat') as f:
            s = f.read()
        fields = s[s.rindex(')')+2:].split()
        cpu = (int(fields[11]) + int(fields[12])) / tck
        run = 0
        for tid in os.listdir(f'/proc/{pid}/task'):
            try:
                with open(f'/proc/{pid}/task/{tid}/stat') as f:
                    s = f.read()
                if s[s.rindex(')')+2] == 'R':
                    run += 1
            except OSError:
                pass
        rows.append((time.monotonic() - t0, cpu, run))
    except (OSError, ValueError, IndexError):
        pass
    time.sleep(0.02)
with open(out, 'w') as f:
    for t, c, r in rows:
        f.write(f'{t:.3f} {c:.2f} {r}\n')
sys.exit(p.returncode)
