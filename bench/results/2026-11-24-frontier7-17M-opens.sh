#!/bin/bash
# The opens of one large frontier ingested by the branch and kill -9'd mid-insert: branch, then main.
D=/tmp/frontier-30M/d
B="nice -n 5 /tmp/frontier-br/.venv/bin/python -m bench.frontier_bench"
M="nice -n 5 /tmp/frontier-main/.venv/bin/python -m bench.frontier_bench"
MB="nice -n 5 /tmp/frontier-main/.venv/bin/python -m bench.frontier_bench_br"
echo "known URLs: $(/tmp/frontier-br/.venv/bin/python -c "
import lmdb; e = lmdb.open('$D', readonly=True, max_dbs=32, lock=False)
with e.begin() as t: print(t.stat(e.open_db(b'urls', txn=t, create=False))['entries'])")"
cd /tmp/frontier-br
echo "branch after the ingest's kill -9: $($B --measure-open $D)"
echo "branch clean: $($B --measure-open $D)"
cd /tmp/frontier-main
echo "main, the branch's file (a rebuild): $($M --measure-open $D)"
echo "main clean: $($M --measure-open $D)"
$MB --kill-mid-insert $D --urls 40000000 --hosts 300000
echo "main after kill: $($M --measure-open $D)"
date -u
