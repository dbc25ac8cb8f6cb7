# nginx's access log (format `bench` in webgen.nginx_conf: $msec first) read
# back per phase: requests per second over time, status counts, and the
# politeness checks (robots.txt before any other path of a host; no path
# robots.txt disallows).
"""Per-phase figures from the benchmark's nginx access log."""

from __future__ import annotations

from collections import Counter


def read(path) -> list[tuple[float, str, int, int, str]]:
    """(time, host, status, body bytes, uri) per request, in log order."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.split(" ", 6)
            if len(parts) < 6:
                continue
            uri = parts[5].strip('"')
            out.append((float(parts[0]), parts[2], int(parts[3]), int(parts[4]), uri))
    return out


def phase(entries, start: float, end: float, disallowed) -> dict:
    """Figures for the requests logged in [start, end]; disallowed(host, uri) -> bool."""
    rows = sorted((e for e in entries if start <= e[0] <= end), key=lambda e: e[0])
    per_s = Counter(int(e[0] - start) for e in rows)
    span = int(end - start) + 1
    statuses = Counter(e[2] for e in rows)
    first_path: dict[str, str] = {}
    for _, host, _, _, uri in rows:
        first_path.setdefault(host, uri)
    robots_not_first = sorted(h for h, uri in first_path.items() if uri != "/robots.txt")
    bad = [f"{host}{uri}" for _, host, _, _, uri in rows if disallowed(host, uri)]
    dupes = sum(n - 1 for n in Counter((e[1], e[4]) for e in rows).values() if n > 1)
    active = (rows[-1][0] - rows[0][0]) if len(rows) > 1 else 0.0
    return {
        "requests": len(rows), "status": {str(k): v for k, v in sorted(statuses.items())},
        "body_bytes": sum(e[3] for e in rows), "hosts": len(first_path),
        "first_to_last_request_s": round(active, 2),
        "pages_per_s_active": round(len(rows) / active, 1) if active else None,
        "per_second": [per_s.get(i, 0) for i in range(span)],
        "hosts_where_robots_not_first": len(robots_not_first), "robots_not_first_sample": robots_not_first[:5],
        "disallowed_fetched": len(bad), "disallowed_sample": bad[:5], "duplicate_requests": dupes,
    }  # fmt: skip
