"""File formats: rule files (``rules_io``), the dump format (``transfer_format``) and the
Cypher/graph export (``graph_export``). They turn records into files and back; services
orchestrate them (``services/transfer.py``, ``services/rules_import.py``)."""
