"""``/docs`` that works offline: Swagger UI served from package data, not a CDN.

FastAPI's default docs page loads Swagger UI's JavaScript and CSS from a CDN, which an
air-gapped team server (or a laptop on a plane) cannot reach. The ``fastapi-offline``
package ships those assets (Swagger UI 5, which reads OpenAPI 3.1); we serve them from
``/docs/static`` and point FastAPI's own page template at them.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

from prism_memory.api.headers import docs_csp

STATIC = "/docs/static"


def install_docs(app: FastAPI, title: str) -> str:
    """Serve ``/docs`` (Swagger UI) with every asset local. The app must have no docs_url.

    Returns:
        The page's content security policy (its one inline script allowed by hash).
    """
    app.mount(STATIC, StaticFiles(packages=[("fastapi_offline", "static")]), name="docs-static")
    page = get_swagger_ui_html(
        openapi_url="/openapi.json",
        title=f"{title} — API docs",
        swagger_js_url=f"{STATIC}/swagger-ui-bundle.js",
        swagger_css_url=f"{STATIC}/swagger-ui.css",
        swagger_favicon_url=f"{STATIC}/favicon.png",
        swagger_ui_parameters={"persistAuthorization": False},
    )
    html = bytes(page.body).decode()

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(html)

    return docs_csp(html)
