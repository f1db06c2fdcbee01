"""The operator console: server-rendered pages over the same access service as ``/v1``."""
