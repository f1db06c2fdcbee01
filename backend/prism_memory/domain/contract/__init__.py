"""The contract: one pydantic model per operation (DESIGN §5-7).

Each model is at once the validator every door's request goes through (all field errors at
once, in the one error shape), the OpenAPI request schema and the MCP tool's input schema.
Bounds live in :mod:`prism_memory.domain.contract.bounds`; field types in
:mod:`prism_memory.domain.contract.checks`.
"""
