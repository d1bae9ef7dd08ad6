"""One way to open a route: who asks, in which incident, and may they (ADR 0120).

A route names its gate once, in its signature, and gets an :class:`Access` back::

    @router.get("/people/{person_id}")
    def person_page(access: Access = on_record(Permission.READ, Person, "person_id")): ...

The gate answers in a fixed order, before the route reads any body or content type
(:class:`GatedRoute` runs it ahead of FastAPI's body parsing):

1. no valid session or token: 401 (a page sends the browser to sign in);
2. a role that grants the permission nowhere: 403;
3. the incident the request is about, from the path (``in_incident``), from a record's
   id in the path or the query (``on_record``, ``on_query_record``), or none
   (``needs``, ``SIGNED_IN``): an unknown record is 404;
4. the permission in that incident: 403 (every 403 is written to the audit trail,
   rate-limited: :mod:`trace_app.web.failures`);
5. an incident named in the path that does not exist: 404 (for those who may see every
   incident; a member of some incidents gets 403 at step 4 for any other id).

A body that names its incident (``POST /api/reports``) is checked by the route with
:func:`trace_app.web.auth.authorize` once the body is read: the gate has already done
steps 1 and 2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from trace_app.accounts.permissions import Permission
from trace_app.accounts.principal import Principal
from trace_app.domain import queries
from trace_app.domain.audit import Actor
from trace_app.domain.errors import NotFoundError, NotSignedInError, UnsupportedMediaError
from trace_app.domain.text import MAX_ID_CHARACTERS, is_id
from trace_app.store.models import Alert, Person, Report
from trace_app.web.auth import (
    SIGNED_IN_MARK,
    authorize,
    bearer_scheme,
    cookie_scheme,
    principal_of,
)
from trace_app.web.deps import database
from trace_app.web.security import DEFERRED_REFUSAL

IncidentFinder = Callable[[Session, Request], str | None]
"""The incident a request is about, read from its path or query (never its body);
``None`` when it names none. Raises NotFoundError for an unknown record."""


@dataclass(frozen=True, slots=True)
class Access:
    """What the gate let through: who, and in which incident (None: no one incident)."""

    principal: Principal
    incident_id: str | None

    @property
    def actor(self) -> Actor:
        return self.principal.actor

    @property
    def incident(self) -> str:
        """The incident id of a gate that always names one (``in_incident``, ``on_record``)."""
        assert self.incident_id is not None, "this route's gate names no incident"
        return self.incident_id


@dataclass(frozen=True, slots=True)
class Gate:
    permission: Permission | None  # None: any signed-in principal
    find: IncidentFinder | None = None
    incident_must_exist: bool = False

    @property
    def mark(self) -> str:
        return self.permission.value if self.permission is not None else SIGNED_IN_MARK

    def open(self, request: Request) -> Access:
        """Steps 1-5 of the module's order, in one short session of its own; raises the
        domain's access errors."""
        with database(request).sessions() as session:
            return self._open(request, session)

    def _open(self, request: Request, session: Session) -> Access:
        principal = principal_of(request, session)
        if principal is None:
            raise NotSignedInError
        if self.permission is None:
            return Access(principal, None)
        if not principal.can_somewhere(self.permission):
            authorize(principal, self.permission, None, anywhere=True)
        if self.find is None:
            return Access(principal, None)
        incident_id = self.find(session, request)
        if incident_id is None:
            return Access(principal, None)
        authorize(principal, self.permission, incident_id)
        if self.incident_must_exist:
            queries.get_incident(session, incident_id)
        return Access(principal, incident_id)


def _checked_id(value: str, what: str) -> str:
    if not value or len(value) > MAX_ID_CHARACTERS or not is_id(value):
        raise NotFoundError(f"No {what} with id {value[:MAX_ID_CHARACTERS]!r}.")
    return value


def path_incident(param: str = "incident_id") -> IncidentFinder:
    def find(_session: Session, request: Request) -> str:
        return _checked_id(str(request.path_params.get(param, "")), "incident")

    return find


RecordKind = type[Report] | type[Person] | type[Alert]


def record_incident(kind: RecordKind, param: str, *, in_query: bool = False) -> IncidentFinder:
    """The incident of the report, person or alert whose id is the path parameter
    ``param`` (or, ``in_query``, the query parameter: optional, None when absent)."""
    what = kind.__name__.lower()

    def find(session: Session, request: Request) -> str | None:
        if in_query:
            value = request.query_params.get(param, "").strip()
            if not value:
                return None
        else:
            value = str(request.path_params.get(param, ""))
        return queries.incident_of(session, kind, _checked_id(value, what))

    return find


def _dependency(gate: Gate) -> Any:
    async def dependency(
        request: Request,
        _bearer: Any = Depends(bearer_scheme),  # named for the OpenAPI description
        _cookie: Any = Depends(cookie_scheme),
    ) -> Access:
        cached = getattr(request.state, "access", None)
        if isinstance(cached, Access) and getattr(request.state, "gate", None) is gate:
            return cached
        access = await run_in_threadpool(gate.open, request)
        request.state.access, request.state.gate = access, gate
        return access

    dependency.trace_permission = gate.mark  # type: ignore[attr-defined]
    dependency.trace_gate = gate  # type: ignore[attr-defined]
    return Depends(dependency)


def anywhere(permission: Permission) -> Any:
    """The permission in some incident (or server-wide); the route names no incident."""
    return _dependency(Gate(permission))


def signed_in() -> Any:
    """Any signed-in principal (sign out, the account page)."""
    return _dependency(Gate(None))


_ANYWHERE = {p: anywhere(p) for p in Permission}


def needs(permission: Permission) -> Any:
    """``access: Access = needs(Permission.READ)``: :func:`anywhere`, one shared gate per
    permission."""
    return _ANYWHERE[permission]


SIGNED_IN: Any = signed_in()


def in_incident(permission: Permission, param: str = "incident_id") -> Any:
    """The permission in the incident named by the path parameter ``param``."""
    return _dependency(Gate(permission, path_incident(param), incident_must_exist=True))


def on_record(permission: Permission, kind: RecordKind, param: str) -> Any:
    """The permission in the incident of the record whose id is the path parameter."""
    return _dependency(Gate(permission, record_incident(kind, param)))


def on_query_record(permission: Permission, kind: RecordKind, param: str) -> Any:
    """As :func:`on_record`, for an optional query parameter (``/publish?person_id=``)."""
    return _dependency(Gate(permission, record_incident(kind, param, in_query=True)))


def custom(permission: Permission, find: IncidentFinder) -> Any:
    """A gate with its own finder (a pending import's token, say)."""
    return _dependency(Gate(permission, find))


def gate_of(dependant: Dependant) -> Gate | None:
    for sub in dependant.dependencies:
        gate = getattr(sub.call, "trace_gate", None)
        if isinstance(gate, Gate):
            return gate
        found = gate_of(sub)
        if found is not None:
            return found
    return None


class GatedRoute(APIRoute):
    """Runs the route's gate before FastAPI reads the body, then any refusal the security
    middleware deferred until the caller was known (a wrong content type: 415 only for
    those who may call the route at all)."""

    def get_route_handler(self) -> Callable[[Request], Any]:
        handler = super().get_route_handler()
        gate = gate_of(self.dependant)

        async def gated(request: Request) -> Response:
            if gate is not None:
                access = await run_in_threadpool(gate.open, request)
                request.state.access, request.state.gate = access, gate
            deferred = request.scope.get("state", {}).get(DEFERRED_REFUSAL)
            if deferred:
                raise UnsupportedMediaError(str(deferred))
            response: Response = await handler(request)
            return response

        return gated


def gated_router(**options: Any) -> APIRouter:
    """An APIRouter whose routes run their gate first (every route module's router)."""
    return APIRouter(route_class=GatedRoute, **options)
