# The dashboard (docs/dashboard.md): one static page, everything inline (CSS,
# JS, the charts drawn as SVG by the JS) because an operator may be offline
# and a crawl's page must not call anywhere else. The page holds no crawl
# data: its script reads /status every REFRESH_MS and /hosts?q=PREFIX for
# the hosts search, and builds every element with textContent and
# createElement, never innerHTML, so a host name, a URL or an error text
# from the crawled web is shown as text whatever bytes it holds. Stable ids
# (summary, chart-pages, states, errors, waiting, hosts, spiders, store,
# settings) are what the browser test reads.
"""PAGE: the dashboard's HTML, served at / by urlserver/http.py."""

from __future__ import annotations

REFRESH_MS = 3000  # how often the page reads /status: a glance, not a load

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WRECK crawl</title>
<style>
:root { --fg:#1d2330; --dim:#6b7385; --line:#e3e6ec; --accent:#2f6fdf; --warn:#c2410c; --ok:#15803d; }
* { box-sizing:border-box; }
body { font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif; color:var(--fg); margin:0; background:#f6f7f9; }
header { background:#1d2330; color:#fff; padding:10px 20px; display:flex; gap:24px; align-items:baseline; flex-wrap:wrap; }
header h1 { font-size:16px; margin:0; }
#state { font-weight:600; padding:1px 8px; border-radius:9px; background:var(--accent); }
#state.finished { background:var(--ok); }
#summary span { margin-right:18px; white-space:nowrap; }
#summary b { font-variant-numeric:tabular-nums; }
main { display:grid; grid-template-columns:repeat(auto-fit,minmax(420px,1fr)); gap:14px; padding:14px 20px; }
section { background:#fff; border:1px solid var(--line); border-radius:6px; padding:10px 14px; min-width:0; }
section.wide { grid-column:1/-1; }
h2 { font-size:13px; text-transform:uppercase; letter-spacing:.04em; color:var(--dim); margin:0 0 8px; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:2px 8px 2px 0; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--dim); font-weight:500; }
td.n { text-align:right; font-variant-numeric:tabular-nums; }
td.t { overflow-wrap:anywhere; max-width:28em; }
.empty { color:var(--dim); font-style:italic; }
svg { width:100%; height:120px; display:block; }
svg .grid { stroke:var(--line); }
svg .axis { fill:var(--dim); font-size:10px; }
svg .line { fill:none; stroke:var(--accent); stroke-width:1.5; }
svg .line.b { stroke:var(--warn); }
.charts { display:grid; grid-template-columns:repeat(auto-fit,minmax(300px,1fr)); gap:10px; }
.tabs button { font:inherit; border:1px solid var(--line); background:#fff; padding:2px 10px; border-radius:4px; cursor:pointer; }
.tabs button.on { background:var(--accent); color:#fff; border-color:var(--accent); }
.tabs input { font:inherit; padding:2px 6px; margin-left:10px; width:16em; }
details summary { cursor:pointer; color:var(--dim); }
footer { padding:0 20px 16px; color:var(--dim); }
footer a { color:var(--dim); }
</style></head>
<body data-state="loading">
<header><h1>WRECK crawl</h1><span id="state">loading</span><div id="summary"></div></header>
<main>
<section class="wide"><h2>Last hour</h2><div class="charts">
<div><b>pages/s</b><svg id="chart-pages" role="img" aria-label="pages per second"></svg></div>
<div><b>bytes/s</b><svg id="chart-bytes" role="img" aria-label="bytes per second"></svg></div>
<div><b>frontier (URLs queued and delayed)</b><svg id="chart-frontier" role="img" aria-label="frontier size"></svg></div>
</div></section>
<section><h2>URLs by state</h2><table id="states"></table></section>
<section><h2>Errors by reason</h2><table id="errors"></table></section>
<section><h2>Waiting for</h2><table id="waiting"></table></section>
<section><h2>Spiders</h2><table id="spiders"></table></section>
<section class="wide"><h2>Hosts</h2>
<div class="tabs" id="host-tabs"><button data-t="busiest" class="on">busiest</button>
<button data-t="slowest">slowest</button><button data-t="erroring">erroring</button>
<button data-t="blocked">blocked</button><input id="host-search" type="search"
placeholder="search: host name prefix" aria-label="search hosts"></div>
<table id="hosts"></table></section>
<section><h2>Store</h2><table id="store"></table></section>
<section><h2>Settings</h2><details><summary>the crawl's settings</summary><table id="settings"></table></details></section>
</main>
<footer><a href="/status">/status</a> · <a href="/metrics">/metrics</a> · refreshed every __REFRESH__ s,
<span id="updated">never</span></footer>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
let last = null, tab = "busiest", query = "", found = null;

function num(n) { return n == null ? "-" : Number(n).toLocaleString("en-US", {maximumFractionDigits: 1}); }
function bytes(n) {
  if (n == null) return "-";
  const u = ["B", "KB", "MB", "GB", "TB"]; let i = 0;
  while (Math.abs(n) >= 1000 && i < u.length - 1) { n /= 1000; i++; }
  return (i ? n.toFixed(1) : String(Math.round(n))) + " " + u[i];
}
function clock(t) { return t == null ? "-" : new Date(t * 1000).toLocaleTimeString("en-GB"); }
function ago(t, now) { return t == null ? "-" : Math.max(0, Math.round(now - t)) + " s ago"; }

// A table from a header and rows of [text, numeric?] cells; text only, never markup.
function fill(id, head, rows, empty) {
  const t = $(id); t.replaceChildren();
  if (!rows.length) {
    const tr = t.insertRow(), td = tr.insertCell(); td.className = "empty"; td.textContent = empty || "none";
    return;
  }
  const hr = t.insertRow();
  for (const h of head) { const th = document.createElement("th"); th.textContent = h; hr.appendChild(th); }
  for (const row of rows) {
    const tr = t.insertRow();
    row.forEach((v, i) => {
      const td = tr.insertCell(); td.textContent = v == null ? "-" : String(v);
      td.className = typeof v === "number" ? "n" : (i === 0 ? "t" : "");
    });
  }
}

// A line chart of (time, value) points into an <svg>, its scale from 0 to the largest value.
function chart(id, times, values, fmt) {
  const svg = $(id); svg.replaceChildren();
  const W = 300, H = 120, L = 46, B = 16;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("preserveAspectRatio", "none");
  const el = (name, attrs, text) => {
    const e = document.createElementNS(SVG, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text != null) e.textContent = text;
    svg.appendChild(e); return e;
  };
  const top = Math.max(1e-9, ...values);
  for (const f of [0, 0.5, 1]) {
    const y = H - B - f * (H - B - 6);
    el("line", {x1: L, x2: W, y1: y, y2: y, class: "grid"});
    el("text", {x: L - 4, y: y + 3, "text-anchor": "end", class: "axis"}, fmt(top * f));
  }
  if (times.length < 2) {
    el("text", {x: (L + W) / 2, y: H / 2, "text-anchor": "middle", class: "axis"}, "collecting (a sample per 10 s)");
    return;
  }
  const t0 = times[0], span = Math.max(1, times[times.length - 1] - t0);
  el("text", {x: L, y: H - 3, class: "axis"}, clock(t0));
  el("text", {x: W, y: H - 3, "text-anchor": "end", class: "axis"}, clock(times[times.length - 1]));
  const pts = times.map((t, i) => `${(L + (t - t0) / span * (W - L)).toFixed(1)},` +
                                  `${(H - B - values[i] / top * (H - B - 6)).toFixed(1)}`);
  el("polyline", {points: pts.join(" "), class: id === "chart-bytes" ? "line b" : "line"});
}

function hostRows(rows) {
  return rows.map((h) => [h.origin, h.queued, h.in_flight, h.fetched, h.errors, h.delay_s,
                          h.robots, h.waiting || "-", h.due ? clock(h.due) : "-", h.last_error || ""]);
}
const HOST_HEAD = ["host", "queued", "in flight", "fetched", "errors", "delay s", "robots.txt", "waiting",
                   "next due", "last error"];

function showHosts() {
  for (const b of document.querySelectorAll("#host-tabs button")) b.classList.toggle("on", !query && b.dataset.t === tab);
  if (query && found) fill("hosts", HOST_HEAD, hostRows(found), "no host starts with that");
  else if (last) fill("hosts", HOST_HEAD, hostRows(last.host_tables[tab] || []), "no host " + tab + " yet");
}

function render(st) {
  last = st;
  const done = st.finished || st.finish_reason;
  document.body.dataset.state = done ? "finished" : "running";
  const state = $("state");
  state.textContent = done ? "finished" + (st.finish_reason ? ": " + st.finish_reason : "") : "running";
  state.className = done ? "finished" : "";
  const urls = st.urls || {}, rate = (st.rates || {}).done_per_s;
  const s = $("summary"); s.replaceChildren();
  for (const [label, value] of [["pages fetched", num(urls.FETCHED || 0)], ["bytes", bytes(st.bytes_fetched)],
                                ["answers/s", num(rate || 0)], ["in flight", num(st.in_flight)],
                                ["hosts", num(st.hosts.known)], ["spiders", num(st.spiders.length)],
                                ...(st.partition ? [["partition", st.partition.index + " of " + st.partition.of],
                                                    ["outbox", num(st.partition.outbox_batches)]] : [])]) {
    const span = document.createElement("span"), b = document.createElement("b");
    b.textContent = value; span.append(label + " ", b); s.appendChild(span);
  }
  const h = st.history || {};
  chart("chart-pages", h.time || [], h.pages_per_s || [], num);
  chart("chart-bytes", h.time || [], h.bytes_per_s || [], bytes);
  chart("chart-frontier", h.time || [], h.frontier || [], num);
  fill("states", ["state", "URLs"], Object.entries(urls).filter(([, n]) => n).map(([k, n]) => [k, n]));
  fill("errors", ["reason", "URLs"], Object.entries(st.errors_by_kind || {}).sort((a, b) => b[1] - a[1]),
       "no URL ended in error");
  fill("waiting", ["waiting for", "hosts / URLs", "next due"],
       (st.waiting_due || []).map((w) => [w.why, w.origins != null ? w.origins : w.urls,
                                          w.next_due ? clock(w.next_due) + (w.exact ? "" : " (or sooner)") : "on an answer"]),
       "nothing: every host with work is served in turn");
  fill("spiders", ["name", "address", "in flight", "answers/s", "last seen"],
       (st.spider_table || []).map((p) => [p.name, p.address, p.in_flight, p.rate, ago(p.last_seen, st.time)]),
       "no spider connected");
  const store = st.store;
  fill("store", ["", ""], store ? [["documents", store.documents], ["bytes (uncompressed)", bytes(store.bytes)],
                                   ["bytes on disk", bytes(store.compressed_bytes)],
                                   ["compression ratio", store.compressed_bytes ? (store.bytes / store.compressed_bytes).toFixed(2) + " : 1" : "-"],
                                   ["disk free", bytes(store.disk_free)], ["as of", clock(store.time)]] : [],
       "the store's figures are not known (urlserver --store-http not given, or the store did not answer)");
  fill("settings", ["setting", "value"], Object.entries(st.settings || {}).map(([k, v]) =>
       [k, v == null ? "unset" : (typeof v === "object" ? JSON.stringify(v) : v)]));
  showHosts();
  $("updated").textContent = "last at " + clock(st.time);
}

async function refresh() {
  try {
    const r = await fetch("/status", {cache: "no-store"});
    if (r.ok) render(await r.json());
  } catch (e) {
    $("updated").textContent = "the urlserver does not answer (" + e.message + ")";
    document.body.dataset.state = last && last.finish_reason ? "finished" : "unreachable";
  }
}

async function search() {
  if (!query) { found = null; showHosts(); return; }
  const asked = query;
  const r = await fetch("/hosts?q=" + encodeURIComponent(asked), {cache: "no-store"});
  if (r.ok && asked === query) { found = (await r.json()).hosts; showHosts(); }
}

for (const b of document.querySelectorAll("#host-tabs button")) {
  b.addEventListener("click", () => { tab = b.dataset.t; query = ""; $("host-search").value = ""; showHosts(); });
}
$("host-search").addEventListener("input", (e) => { query = e.target.value.trim(); search(); });
refresh();
setInterval(() => { refresh(); if (query) search(); }, __REFRESH_MS__);
</script>
</body></html>
""".replace("__REFRESH_MS__", str(REFRESH_MS)).replace("__REFRESH__", str(REFRESH_MS // 1000))
