"""Adherence (DESIGN §12): what an agent did against the machine-checkable checks of the
rules it was told. Pure: no I/O.

- :mod:`.checks` — the ``checks`` of a memorule: the four kinds, parsed and bounded.
- :mod:`.actions` — a session's actions in the one client-neutral shape every door takes.
- :mod:`.paths` — which edited files a glob names (relative to the session's cwd).
- :mod:`.judge` — the verdict per rule (violated / followed / not exercised) and the guard's
  question for a pending action.
- :mod:`.redact` — commands as they are stored: secrets masked, length bounded.
"""
