"""Rule files in and out: CLAUDE.md, AGENTS.md, Cursor ``.mdc``, Copilot instructions.

- :mod:`.importer` reads files safely, splits them into rules and writes memorules (and,
  if asked, notes) through :class:`~app.services.memory_service.MemoryService`.
- :mod:`.exporter` renders the memorules that apply to a context as those files.

Modules: ``reading`` (safe reads, hidden characters), ``frontmatter``, ``blocks`` and
``markdown`` (splitting), ``sentences``, ``kinds`` (the kind guesser), ``surfaces``
(globs ↔ surface), ``formats`` (dialects), ``requests`` (subjects, evidence, keys),
``matching`` (re-import identity), ``records``.
"""
