"""``python -m app``: the same as the ``prism`` command."""

from app.cli.main import main

main()
