"""The console's adherence report: ``/adherence`` (DESIGN §12).

Thin, like the rest of the console: the page acts with its session's key and calls
:meth:`~prism_memory.services.access_service.AccessService.adherence_report` once (reader
keys and up). Per rule with checks: sessions served, exercised and violated, and the last
violation with its evidence; the most-violated rules, rules never exercised and the sessions
with violations. Each rule has an anchor (``/adherence#rule-<id>``) its own page links to.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response

from prism_memory.domain.access import ApiKey
from prism_memory.domain.records import SessionContext
from prism_memory.errors import PrismError
from prism_memory.web.pages import page_of, refusal

router = APIRouter(include_in_schema=False)


def install(app: FastAPI) -> None:
    """Serve the adherence page on ``app`` (after
    :func:`prism_memory.web.console.install_console`)."""
    app.include_router(router)


@router.get("/adherence")
async def adherence(request: Request) -> Response:
    page = page_of(request)
    if (refused := refusal(page)) is not None:
        return refused
    access = page.access

    def work(key: ApiKey, ctx: SessionContext) -> dict[str, Any]:
        return access.adherence_report(key, ctx).to_dict()

    try:
        report = await page.run(work)
    except PrismError as exc:
        return page.error(exc)
    return page.render("adherence.html", report=report)
