"""The FastAPI application factory.

``create_app(settings)`` opens the database, applies migrations, seeds the demo into an
empty database on a demo server only (``settings.demo``; a deployment never seeds and
refuses Reset demo), and mounts the pages, the JSON API, the investigation's routes
(:mod:`trace_app.web.investigation_routes`, set up here with the model settings) and the
static files. A new page or API route goes into one of these routers (see
docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from trace_app.demo_reset import seed_if_empty
from trace_app.investigation.model_settings import ModelSettings
from trace_app.settings import TraceSettings
from trace_app.store.db import Database
from trace_app.web import (
    api,
    interchange_routes,
    investigation_routes,
    pages,
    person_routes,
    review_routes,
)
from trace_app.web.deps import ReportContextProvider, make_templates
from trace_app.web.errors import http_error_handler, validation_handler
from trace_app.web.security import SecurityMiddleware
from trace_app.web.throttle import PassphraseThrottle

log = logging.getLogger(__name__)


def create_app(
    settings: TraceSettings | None = None,
    *,
    db: Database | None = None,
    model: ModelSettings | None = None,
    model_health: Callable[[], str | None] | None = None,
) -> FastAPI:
    """``model`` says which model live checks ask and holds their passphrase (default:
    :meth:`ModelSettings.from_env`; ``trace demo`` passes the one it generated).
    ``model_health`` (e.g. the embedded server's ``unavailable_reason``) says why the
    model cannot take a call now, or ``None``; the investigation checks it before a call
    and the Investigate panel shows it."""
    settings = settings or TraceSettings.from_env()
    database = db or Database.from_settings(settings)
    if settings.demo:
        with database.session() as session:
            if seed_if_empty(session, settings):
                log.info("seeded the demo into an empty database")

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        if db is None:
            database.dispose()

    app = FastAPI(
        title="Trace",
        summary="Disaster people-tracing: incidents, organisations, reports, people, alerts.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.db = database
    app.state.model_health = model_health
    app.state.passphrase_throttle = PassphraseThrottle(
        settings.guess_limit,
        settings.guess_limit_overall,
        settings.rate_limit_storage,
    )
    app.state.templates = make_templates()
    report_context: list[ReportContextProvider] = []
    app.state.report_context_providers = report_context
    # (request, report) -> names for the report view, e.g. a no-JS check's result
    app.state.report_request_providers = []

    app.add_exception_handler(RequestValidationError, validation_handler)
    app.add_exception_handler(StarletteHTTPException, http_error_handler)
    app.add_middleware(
        SecurityMiddleware,
        max_body_bytes=settings.max_body_bytes,
        xml_body_bytes=settings.pfif_max_bytes,
    )
    static_dir = resources.files("trace_app.web").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static_dir)), name="static")
    app.include_router(api.router)
    app.include_router(interchange_routes.router)
    app.include_router(pages.router)
    app.include_router(person_routes.api_router)
    app.include_router(person_routes.page_router)
    app.include_router(investigation_routes.router)
    app.include_router(review_routes.router)
    investigation_routes.setup(app, model)
    return app


def app_from_env() -> FastAPI:
    """For ``uvicorn --factory trace_app.web.app:app_from_env``."""
    return create_app(TraceSettings.from_env())
