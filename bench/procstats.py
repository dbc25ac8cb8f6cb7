# CPU time and peak memory of a process tree, from /proc. A sampler thread
# walks the descendants of a root pid every TICK_S and keeps, per pid, the
# last utime+stime and VmHWM it saw, and the component `classify` names it
# (processes that exit keep their last sample). totals() sums per component.
"""Sample CPU seconds and peak RSS of a process tree by component."""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from typing import Callable

TICK_S = 0.5
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float, float] | None:
    """(ppid, cpu seconds, of which in the kernel) of pid, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(b")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / CLK_TCK, int(fields[12]) / CLK_TCK


def _status_kb(pid: int, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def hwm_kb(pid: int) -> int:
    """Peak resident set size of pid since it started (VmHWM), KiB; 0 once gone."""
    return _status_kb(pid, "VmHWM:")


def rss_kb(pid: int) -> int:
    """Resident set size of pid now (VmRSS), KiB; 0 once gone."""
    return _status_kb(pid, "VmRSS:")


def anon_kb(pid: int) -> int:
    """Anonymous resident memory of pid now (RssAnon: the heap, not mapped
    files such as an LMDB environment's pages), KiB; 0 once gone."""
    return _status_kb(pid, "RssAnon:")


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def descendants(root: int) -> list[int]:
    """root and every process below it."""
    children: dict[int, list[int]] = defaultdict(list)
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st:
                children[st[0]].append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


class TreeSampler:
    """Samples the tree under `root` in a thread until stop()."""

    def __init__(self, root: int, classify: Callable[[int, str, int], str]) -> None:
        self.root, self.classify = root, classify
        self.procs: dict[int, dict] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "TreeSampler":
        self._thread.start()
        return self

    def sample(self) -> None:
        for pid in descendants(self.root):
            st = _stat(pid)
            if st is None:
                continue
            rec = self.procs.get(pid)
            if rec is None or rec["component"] == "other":
                # Again until named: a child caught between fork and exec shows its parent's command.
                cmd = cmdline(pid)
                rec = self.procs[pid] = {**(rec or {}), "pid": pid, "ppid": st[0], "cmd": cmd[:200],
                                         "component": self.classify(pid, cmd, st[0])}  # fmt: skip
            rec["cpu_s"], rec["sys_s"] = st[1], st[2]
            rec["hwm_kb"] = max(rec.get("hwm_kb", 0), hwm_kb(pid))

    def _run(self) -> None:
        while not self._stop.wait(TICK_S):
            self.sample()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def pids(self, component: str) -> list[int]:
        return [p for p, r in self.procs.items() if r["component"] == component]

    def totals(self) -> dict[str, dict]:
        """Per component: processes, CPU seconds, peak RSS (MB, of its largest process and summed)."""
        out: dict[str, dict] = {}
        for rec in self.procs.values():
            c = out.setdefault(rec["component"], {"procs": 0, "cpu_s": 0.0, "sys_s": 0.0,
                                                  "peak_rss_mb_max": 0.0, "peak_rss_mb_sum": 0.0})  # fmt: skip
            c["procs"] += 1
            c["cpu_s"] += rec.get("cpu_s", 0.0)
            c["sys_s"] += rec.get("sys_s", 0.0)
            mb = rec.get("hwm_kb", 0) / 1024
            c["peak_rss_mb_max"] = max(c["peak_rss_mb_max"], mb)
            c["peak_rss_mb_sum"] += mb
        for c in out.values():
            for k in ("cpu_s", "sys_s", "peak_rss_mb_max", "peak_rss_mb_sum"):
                c[k] = round(c[k], 2)
        return out
