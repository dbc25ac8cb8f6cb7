# What each operator API call does to the engine (docs/api.md), without
# HTTP: the API (api.py) validates a request, calls one method here, then
# commits and answers. Every change goes through the engine's own paths --
# seeds through Frontier.discover as at a start, URLs moved by the table
# of urlstate.py, retries by Crawl.retry as --retry-errors -- and is
# recorded in the audit list (control.py) in the same transaction.
"""Operations: the operator's changes and look-ups on a running crawl."""

from __future__ import annotations

import logging
import time

from wreck.netpolicy import AddressPolicy
from wreck.seedfile import problem
from wreck.urlnorm import normalize

from . import db as d
from .control import block_queue, blocked_count, pause_origin, unblock_queue
from .history import described, iso
from .politeness import Waiting
from .scope import split_host

log = logging.getLogger("urlserver")
HOST_LOG = 20  # audit entries shown with a host


class Operations:
    """The operator's verbs on `crawl` (a Crawl); `clock` gives the audit's times."""

    def __init__(self, crawl, *, clock=time.time) -> None:
        self.crawl = crawl
        self.clock = clock
        self.policy = AddressPolicy(crawl.settings.allow_net)

    def _audit(self, action: str, target: str, **detail) -> dict:
        fr = self.crawl.frontier
        entry = self.crawl.controls.audit(fr.txn, fr.next_id("next_audit"), self.clock(), action, target, **detail)
        return {"seq": entry.seq, "action": action, "target": target, **detail}

    def origins_of(self, name: str) -> list:
        """The origins (http, https, ports) of host name `name`."""
        return [host for host in self.crawl.frontier.origins.values() if host.name == name]

    # -- changes ---------------------------------------------------------------------

    def add_seeds(self, urls: list[str]) -> dict:
        """Admit `urls` as seeds are at a start (the seed check, normalised, in scope)."""
        crawl = self.crawl
        results, counts = [], {"new": 0, "known": 0, "refused": 0}
        for raw in urls:
            why = problem(raw, self.policy)
            outcome = "refused"
            if why is None:
                added = crawl.add_seed(raw)
                if added in ("queued", "forwarded"):  # forwarded: to the partition owning it
                    outcome = "new"
                elif added == "known":
                    outcome = "known"
                elif added == "filtered":
                    why = (crawl.lookup(raw) or {}).get("reason") or "filtered"
                else:
                    why = "not a URL (seeds are http:// or https:// URLs)"
            counts[outcome] += 1
            item = {"url": raw, "outcome": outcome, "normalized": normalize(raw)}
            if why is not None:
                item["why"] = why
            results.append(item)
        return {**counts, **self._audit("seeds", "crawl", **counts), "results": results}

    def set_paused(self, paused: bool) -> dict:
        """Pause (or resume) handing out work to every spider."""
        self.crawl.controls.set_paused(self.crawl.frontier.txn, paused)
        return self._audit("pause" if paused else "resume", "crawl")

    def host_pause(self, name: str, paused: bool) -> dict:
        crawl, now = self.crawl, self.clock()
        crawl.controls.set_host(crawl.frontier.txn, name, paused=paused)
        for host in self.origins_of(name):
            if paused:
                pause_origin(crawl.politeness, host)
            elif host.waiting is Waiting.PAUSED:
                host.waiting = Waiting.NONE
                crawl.wake(host, now)
        return self._audit("host_pause" if paused else "host_resume", name)

    def host_block(self, name: str, blocked: bool) -> dict:
        """Block a host name (its queued URLs end BLOCKED at once, in batches
        for a very long queue) or unblock it (they are queued again)."""
        crawl, now = self.crawl, self.clock()
        crawl.controls.set_host(crawl.frontier.txn, name, blocked=blocked)
        moved = 0
        for host in self.origins_of(name):
            if blocked:
                count, more = block_queue(crawl.frontier, host)
                moved += count
                if more:
                    crawl.politeness.schedule(host, now)  # its next turns block the rest
            else:
                moved += unblock_queue(crawl.frontier, host)
                if host.waiting is Waiting.PAUSED and not crawl.controls.host(name).paused:
                    host.waiting = Waiting.NONE
                crawl.wake(host, now)
        return self._audit("host_block" if blocked else "host_unblock", name, urls=moved)

    def host_delay(self, name: str, seconds: float) -> dict:
        self.crawl.controls.set_host(self.crawl.frontier.txn, name, delay=seconds)
        return self._audit("host_delay", name, seconds=seconds)

    def retry(self, state: str, wanted, pattern: str | None) -> dict:
        """Queue again the ERROR (state 'ERROR') or deferred (state 'DEFERRED':
        waiting for a retry, robots.txt unreachable) URLs `wanted` accepts."""
        crawl = self.crawl
        counts = crawl.retry(wanted, errors=state == "ERROR", deferred=state == "DEFERRED", now=self.clock())
        return {**counts, **self._audit("retry", "crawl", state=state, pattern=pattern, urls=counts["urls"])}

    # -- look-ups ---------------------------------------------------------------------

    def url(self, raw: str) -> dict | None:
        """A URL's record, its history and its last error; None if unknown."""
        crawl = self.crawl
        found = crawl.lookup(raw)
        if found is None:
            return None
        history = described(crawl.frontier.record(d.fingerprint(normalize(raw))).history)
        error = found["reason"] if found["state"] in ("ERROR", "FETCH_ERROR") else None
        return {**found, "fetches": history["fetches"], "last_error": error, "history": history["moves"]}

    def host(self, name: str) -> dict | None:
        """A host name's controls, origins and recent changes; None if unknown and uncontrolled."""
        crawl = self.crawl
        origins = self.origins_of(name)
        controlled = name in crawl.controls.hosts
        if not origins and not controlled:
            return None
        slot = crawl.politeness.names.get(name)
        out = []
        for host in origins:
            robots = host.robots
            out.append({"origin": host.origin, "queued": host.queued, "admitted": host.admitted,
                        "blocked_urls": blocked_count(crawl.frontier, host), "in_flight": host.inflight,
                        "waiting": host.waiting.value or None, "address": host.ip,
                        "robots": robots.phase.name, "robots_tries": robots.tries,
                        "crawl_delay": host.delay})
        control = crawl.controls.host(name)
        delay = max(crawl.settings.delay, control.delay, *(h.delay for h in origins), slot.slow if slot else 0.0)
        return {"host": name, "paused": control.paused, "blocked": control.blocked,
                "delay": {"set": control.delay or None, "effective": delay, "backoff": (slot.slow or None) if slot else None},
                "next_allowed": iso(slot.next_ok) if slot and slot.next_ok else None,
                "origins": out, "changes": crawl.controls.audit_log(crawl.frontier.txn, limit=HOST_LOG, target=name)}

    def audit_log(self, limit: int) -> list[dict]:
        return self.crawl.controls.audit_log(self.crawl.frontier.txn, limit=limit)


def host_name(text: str) -> str | None:
    """The host name an operator means by `text` ('Example.ORG', 'example.org:8080'), normalised; None if none."""
    url = normalize(f"http://{text}/")
    if url is None or "/" in text or "@" in text:
        return None
    return split_host(url)[1]

