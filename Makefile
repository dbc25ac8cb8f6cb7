# Every target works from a fresh clone: the venv is made and filled on demand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench bench-protocol bench-spider bench-store bench-frontier bench-bandwidth clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall whenever the dependency list changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

# Crawl the local test web (127.x addresses only) and show what was stored.
demo: $(STAMP)
	$(BIN)/python -m tests.web.demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

# End to end: nginx serves a generated web on 127.1.x.y; the server's ceiling,
# wreck-crawl and Scrapy crawl it in turn (installs nginx and bench/.venv-scrapy if
# missing). ARGS="--hosts 100 --pages 10000" for a quick run.
bench: $(STAMP)
	$(BIN)/python -m bench.crawl $(ARGS)

bench-protocol: $(STAMP)
	$(BIN)/python -m bench.protocol_bench

bench-spider: $(STAMP)
	$(BIN)/python -m bench.spider_bench

bench-store: $(STAMP)
	$(BIN)/python -m bench.store_bench

bench-frontier: $(STAMP)
	$(BIN)/python -m bench.frontier_bench

bench-bandwidth: $(STAMP)
	$(BIN)/python -m bench.bandwidth_bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
