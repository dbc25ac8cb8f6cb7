# wreck-crawl: the one-command crawl on one machine. It sits above the three
# daemons: it starts them as child processes and talks to them only as an
# operator would (their command lines, stdout, the urlserver's /status and
# the store's public read API), never through their internals.
"""wreck-crawl: store, urlserver and spider on this machine in one command."""
