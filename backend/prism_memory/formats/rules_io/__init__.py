"""Rule files in and out: CLAUDE.md, AGENTS.md, Cursor ``.mdc``, Copilot instructions.

- :mod:`prism_memory.services.rules_import` (a service: it writes) reads files safely, splits them
  into rules and writes memorules (and, if asked, notes) through
  :class:`~prism_memory.services.access_service.AccessService`, with the operator's key.
- :mod:`.exporter` renders the memorules that apply to a context as those files.

Modules: ``reading`` (safe reads, hidden characters), ``frontmatter``, ``blocks``
(markdown-it-py's token stream as a block tree), ``markdown`` and ``drafts`` (splitting into
units), ``lists`` (lead-ins, their objects, definition lists that describe, vocabularies),
``exceptions`` (an "Exceptions:" label stays with its rule), ``tables``, ``cues`` (the cues
that hold across languages), ``markers`` (the modal markers, one table per language),
``grammar`` (instructions by grammar in German and the Romance languages), ``english`` (the
English imperative), ``headings`` (what a heading says of its entries), ``imports``
(CLAUDE.md ``@path`` imports), ``sentences`` (sentences, and lines written as a list
without marks), ``kinds`` (the rule classifier and
:func:`~prism_memory.formats.rules_io.kinds.rule_likeness`), ``surfaces`` (globs ↔ surface),
``formats`` (dialects), ``requests`` (subjects, evidence, keys), ``matching`` (re-import
identity), ``records``.
"""
