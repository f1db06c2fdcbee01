"""Prism's version, in one place: the package metadata (pyproject.toml reads it),
``prism --version``, ``/openapi.json`` and the MCP server's ``serverInfo``."""

VERSION = "0.1.0"
