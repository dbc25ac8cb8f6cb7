# `python -m storeserver` is the storeserver command.
from .cli import main

main()
