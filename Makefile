# Every target works from a fresh clone: the venv is made and filled on demand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed


.PHONY: demo test cli-docs bench bench-idle bench-realdocs bench-attacks bench-protocol bench-spider bench-store bench-warc bench-frontier bench-partitions bench-dedup bench-feeds bench-bandwidth bench-robots bench-charset bench-export chaos clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall whenever the dependency list changes. Bytecode is compiled here,
# once: an editable install compiles nothing, and with PYTHONDONTWRITEBYTECODE=1
# every daemon would compile its imports at each start.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/python -m compileall -q -j 0 wreck urlserver spider storeserver protocol
	touch $(STAMP)

# Crawl the local test web (127.x addresses only) and show what was stored.
demo: $(STAMP)
	$(BIN)/python -m tests.web.demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

# docs/cli.md: every command's --help at 80 columns (tests/shared/test_cli_help.py checks it is in step).
cli-docs: $(STAMP)
	$(BIN)/python -m tests.cli_helpers

# Fuzz every protocol decoder (tests/fuzz/README.md): FUZZ_SECONDS each, with
# atheris if it installs, else the plain mutation driver. Crashes land in .fuzz/.
.PHONY: fuzz
FUZZ_SECONDS ?= 120
SOAK_CONNECTIONS ?= 20000
FUZZ_TARGETS := handshake control_server control_client store_records store_frames
fuzz: $(STAMP)
	$(BIN)/pip install --quiet -e '.[fuzz]' || echo "atheris did not install: the plain driver runs instead"
	@failed=""; for t in $(FUZZ_TARGETS); do \
		echo "== $$t ($(FUZZ_SECONDS) s)"; \
		$(BIN)/python -m tests.fuzz.$$t --seconds $(FUZZ_SECONDS) $(FUZZ_ARGS) || failed="$$failed $$t"; \
	done; \
	echo "== bad peers against the daemons"; \
	$(BIN)/python -m tests.fuzz.soak --connections $(SOAK_CONNECTIONS) || failed="$$failed soak"; \
	if [ -n "$$failed" ]; then echo "failed:$$failed (crash inputs under .fuzz/)"; exit 1; fi

# End to end: nginx serves a generated web on 127.1.x.y; the server's ceiling,
# wreck-crawl and Scrapy crawl it in turn (installs nginx and bench/.venv-scrapy if
# missing). ARGS="--hosts 100 --pages 10000" for a quick run.
bench: $(STAMP)
	$(BIN)/python -m bench.crawl $(ARGS)

# kill -9 the urlserver, the store, a spider worker or the whole spider at
# random moments of a crawl of the local test web, restart them, and prove
# nothing was lost (default: 50 kills over a 100,000-page web; about 5 min
# here). ARGS="--kills 10 --hosts 60 --pages 60" for a quick run.
chaos: $(STAMP)
	$(BIN)/python -m tests.chaos $(ARGS)

# The crawl loop's timing on the local test web: per host, the gap from a
# response to the next request at --delay 0, and the CPU share of a crawl
# where everything waits (over 60 s; aim: under 1% of a core).
bench-idle: $(STAMP)
	$(BIN)/python -m bench.idle_bench $(ARGS)

# WRECK against wget on real documentation trees (Debian's doc packages,
# installed if missing) served by nginx on loopback: pages, wall time, CPU
# seconds, per-host gaps, and coverage byte for byte.
bench-realdocs: $(STAMP)
	$(BIN)/python -m bench.realdocs $(ARGS)

bench-protocol: $(STAMP)
	$(BIN)/python -m bench.protocol_bench

bench-spider: $(STAMP)
	$(BIN)/python -m bench.spider_bench

bench-store: $(STAMP)
	$(BIN)/python -m bench.store_bench $(ARGS)

# WARC files as the crawl goes (--warc-dir) against none, and wreck-dump --warc.
bench-warc: $(STAMP)
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.warc_bench
	$(BIN)/python -m bench.warc_gzip_bench

bench-dedup: $(STAMP)
	$(BIN)/python -m bench.dedup_bench

# wreck-dump's exports (WARC, CDXJ, Parquet, WACZ): CPU-seconds and sizes next to the store.
bench-export: $(STAMP)
	$(BIN)/python -m bench.export_bench

# The urlserver's engine alone: new links/s, hand-outs/s, RAM per known URL,
# reopen times (default 10M URLs over 100,000 hosts; its data under /tmp,
# deleted after). ARGS="--urls 100000000 --hosts 1000000" for 100M (about
# 25 GB of disk), ARGS="--quick" for a small run.
bench-frontier: $(STAMP)
	$(BIN)/python -m bench.frontier_bench $(ARGS)

# 1, 2, 4, 8 urlserver partitions on this box fed by scripted spiders (issue 19):
# hand-outs/s, links forwarded/s and CPU-seconds per partition (docs/scaling.md,
# Partitions). ARGS="--partitions 1,2 --seconds 5" for a short run.
bench-partitions: $(STAMP)
	$(BIN)/python -m bench.partition_bench $(ARGS)

# Feed parsers on a realistic news feed: fastfeedparser (used) vs feedparser.
bench-feeds: $(STAMP)
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.feed_bench

# robots.txt parsers on Google's reference cases and on a 500 KiB robots.txt:
# urlserver/robotsrules.py (used), protego, robotspy, Google's parser and ports.
bench-robots: $(STAMP)
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.robots_bench

# WHATWG encoding sniffing and link extraction per page (docs/urls.md).
bench-charset: $(STAMP)
	$(BIN)/python -m bench.charset_bench

# RSS of each daemon and spider worker before, during and after each resource
# attack of issue 14, against the real daemons on loopback, beside the bound
# each follows (bench/results/DATE-attack-memory.json and a table).
bench-attacks: $(STAMP)
	$(BIN)/python -m bench.attack_memory

bench-bandwidth: $(STAMP)
	$(BIN)/python -m bench.bandwidth_bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
