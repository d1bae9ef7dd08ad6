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
from starlette.middleware.trustedhost import TrustedHostMiddleware
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from trace_app.accounts.demo_accounts import DEMO_ACCOUNT_NAMES
from trace_app.demo_reset import seed_if_empty
from trace_app.domain.errors import TraceError
from trace_app.investigation.model_settings import ModelSettings
from trace_app.settings import DEFAULT_ALLOWED_HOSTS, TraceSettings
from trace_app.store.db import Database
from trace_app.web.accounts import audit_routes, member_routes
from trace_app.web.accounts import routes as account_routes
from trace_app.web.accounts.login_throttle import LoginThrottle
from trace_app.web.alerts import routes as alert_routes
from trace_app.web.deps import ReportContextProvider, make_templates
from trace_app.web.duplicates import routes as duplicate_routes
from trace_app.web.errors import http_error_handler, validation_handler
from trace_app.web.failures import RefusalAudit, trace_error_handler
from trace_app.web.follow_ups import page_routes as follow_up_pages
from trace_app.web.incidents import routes as incident_routes
from trace_app.web.incidents.views import menu_incident_of
from trace_app.web.inquiries import page_routes as inquiry_pages
from trace_app.web.inquiries import routes as inquiry_routes
from trace_app.web.interchange import api_routes as interchange_api_routes
from trace_app.web.interchange import page_routes as interchange_page_routes
from trace_app.web.investigation import routes as investigation_routes
from trace_app.web.language import LanguageMiddleware
from trace_app.web.people import routes as people_routes
from trace_app.web.reports import publish_routes
from trace_app.web.reports import routes as report_routes
from trace_app.web.reviews import routes as review_routes
from trace_app.web.security import SecurityMiddleware
from trace_app.web.subscriptions import routes as subscription_routes
from trace_app.web.throttle import PassphraseThrottle, PublishLimiter
from trace_app.web.webhooks import page_routes as webhook_pages
from trace_app.web.webhooks import routes as webhook_routes

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
        # served by trace_app.web.account_routes, to signed-in users and tokens only
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.db = database
    app.state.model_health = model_health
    app.state.passphrase_throttle = PassphraseThrottle(
        settings.guess_limit,
        settings.guess_limit_overall,
        settings.rate_limit_storage,
    )
    app.state.login_throttle = LoginThrottle(settings)
    app.state.publish_limiter = PublishLimiter(settings)
    app.state.templates = make_templates()
    app.state.templates.env.globals["menu_incident"] = menu_incident_of  # base.html's menu
    app.state.demo_account_names = DEMO_ACCOUNT_NAMES if settings.demo else ()
    report_context: list[ReportContextProvider] = []
    app.state.report_context_providers = report_context
    # (request, report) -> names for the report view, e.g. a no-JS check's result
    app.state.report_request_providers = []

    app.add_exception_handler(RequestValidationError, validation_handler)
    app.add_exception_handler(StarletteHTTPException, http_error_handler)
    app.add_exception_handler(TraceError, trace_error_handler)
    app.state.refusal_audit = RefusalAudit(settings)
    app.add_middleware(LanguageMiddleware)  # the request's language (issue 42)
    app.add_middleware(
        SecurityMiddleware,
        max_body_bytes=settings.max_body_bytes,
        xml_body_bytes=settings.pfif_max_bytes,
    )
    # Outermost last: forwarded headers from trusted proxies only, then the Host check.
    hosts = settings.allowed_hosts or DEFAULT_ALLOWED_HOSTS
    if "*" not in hosts:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))
    if settings.trusted_proxies:
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(settings.trusted_proxies))
    static_dir = resources.files("trace_app.web").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static_dir)), name="static")
    # Swagger UI for /docs, from its package (no CDN): scripts and styles, nothing secret
    from swagger_ui_bundle import swagger_ui_path

    app.mount("/docs/assets", StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")
    # one feature a package: its routes and schemas together (docs/architecture.md)
    app.include_router(account_routes.router)
    app.include_router(account_routes.api_router)
    app.include_router(audit_routes.router)
    app.include_router(audit_routes.api_router)
    app.include_router(member_routes.router)
    app.include_router(member_routes.page_router)
    app.include_router(incident_routes.api_router)
    app.include_router(incident_routes.page_router)
    app.include_router(report_routes.api_router)
    app.include_router(report_routes.page_router)
    app.include_router(publish_routes.router)
    app.include_router(people_routes.api_router)
    app.include_router(people_routes.page_router)
    app.include_router(alert_routes.api_router)
    app.include_router(alert_routes.page_router)
    app.include_router(duplicate_routes.api_router)
    app.include_router(duplicate_routes.page_router)
    app.include_router(interchange_api_routes.router)
    app.include_router(interchange_page_routes.router)
    app.include_router(investigation_routes.router)
    app.include_router(review_routes.router)
    app.include_router(inquiry_routes.api_router)
    app.include_router(webhook_routes.api_router)
    app.include_router(subscription_routes.router)  # mailed links (issue 41)
    app.include_router(inquiry_pages.page_router)  # the desk's and coordinators' pages
    app.include_router(follow_up_pages.page_router)
    app.include_router(webhook_pages.page_router)
    inquiry_pages.setup(app)
    investigation_routes.setup(app, model)
    return app


def app_from_env() -> FastAPI:
    """For ``uvicorn --factory trace_app.web.app:app_from_env``."""
    return create_app(TraceSettings.from_env())
