# What wreck-crawl's exit costs once its last line is out (tidy9, issue 16):
# a child imports what wreck-crawl imports for its daemons (fork.preload),
# freezes the heap as run.py does, prints a line, then exits the ordinary
# way (sys.exit: Python tears down every module) or at once
# (wreck.local.cli._exit_at_once). The parent times the line to the exit
# (wall) and the child's CPU after the line (rusage from wait4), alternating.
#   .venv/bin/python bench/results/2026-11-24-s9-tidy9-exit.py   (from a tree that has _exit_at_once)
import os
import statistics
import subprocess
import sys
import time

CHILD = """import gc, resource, sys
from wreck.local import fork, run
from wreck.local.cli import _exit_at_once
fork.preload(run.DAEMON_COMMANDS)
gc.freeze()
r = resource.getrusage(resource.RUSAGE_SELF)
print(f"bye {r.ru_utime + r.ru_stime}", flush=True)
if sys.argv[1] == "at-once":
    _exit_at_once(0)
sys.exit(0)
"""
res = {"ordinary": [], "at-once": []}
for _ in range(10):
    for how in res:
        p = subprocess.Popen([sys.executable, "-c", CHILD, how], stdout=subprocess.PIPE)
        line = p.stdout.readline()
        t0 = time.monotonic()
        _, _, ru = os.wait4(p.pid, 0)
        t1 = time.monotonic()
        p.returncode = 0
        res[how].append(((t1 - t0) * 1000, (ru.ru_utime + ru.ru_stime - float(line.split()[1])) * 1000))
for how, v in res.items():
    print(how, "wall ms median %.1f" % statistics.median(x[0] for x in v),
          "cpu ms median %.1f" % statistics.median(x[1] for x in v), "walls", [round(x[0]) for x in v])
