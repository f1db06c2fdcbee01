"""``python -m prism_memory``: the same as the ``prism`` command."""

from prism_memory.cli.main import main

main()
