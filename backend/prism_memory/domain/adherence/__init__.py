"""Adherence (DESIGN §12): what an agent did against the machine-checkable checks of the
rules it was told. Pure: no I/O.

- :mod:`.checks` — the ``checks`` of a memorule: the four kinds, parsed and bounded.
- :mod:`.actions` — a session's actions in the one client-neutral shape every door takes.
"""
