"""Validation errors in plain words, and the JSON body of a refused request.

A 422 never echoes what was sent (it may be huge, unencodable such as ``NaN``, or hold a
passphrase): each error keeps only where it is (``loc``), a plain message and its type.
The body is ``{"detail": "<field> <what is wrong>; ...", "code": "invalid_body",
"errors": [{"loc", "msg", "type"}]}``; an empty or missing summary or original text gives
``code: "empty_report"`` and exactly "Enter a summary and the original report text.";
errors of Trace's own report rules only (a blank name, a refused character, a report time
out of range) give ``code: "invalid_report"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from trace_app.domain.errors import EMPTY_REPORT_MESSAGE, TraceError
from trace_app.domain.publish import MAX_AGE
from trace_app.web.deps import render

# Custom error types whose message is a whole sentence, shown without the field's name.
SENTENCE_TYPES = frozenset({"blank", "empty_report"})
AGE_TYPES = frozenset(
    {
        "int_parsing",
        "int_from_float",
        "int_type",
        "finite_number",
        "greater_than_equal",
        "less_than_equal",
    }
)
AGE_MESSAGE = f"must be a whole number from 0 to {MAX_AGE}"
EMPTY_REPORT_FIELDS = frozenset({"summary", "original_text"})
# Errors of Trace's own report rules (code "invalid_report", as the domain's own errors).
REPORT_RULE_TYPES = frozenset(
    {"blank", "invalid_text", "bidi_control", "time_range", "time_future", "empty_report"}
)


def trace_error_response(status: int, exc: TraceError) -> JSONResponse:
    """A domain refusal as the API answers it: ``{"detail": message, "code": code}``."""
    return JSONResponse(
        {"detail": str(exc), "code": getattr(exc, "code", "error")}, status_code=status
    )


class ErrorOut(BaseModel):
    detail: str
    code: str


class ServerErrorOut(BaseModel):
    detail: str
    code: str
    error_id: str


class ErrorItem(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class ValidationErrorOut(BaseModel):
    """A refused body or parameter; ``errors`` is absent when a domain rule refused it
    (an empty summary or text, a blank name or source)."""

    detail: str
    code: str
    errors: list[ErrorItem] = []


# Answers any API request may get from the security middleware or the error handlers.
COMMON_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "A body that is not JSON, or a bad Content-Length"},
    413: {"model": ErrorOut, "description": "Body larger than TRACE_MAX_BODY_BYTES"},
    415: {"model": ErrorOut, "description": "A POST body that is not application/json"},
    422: {"model": ValidationErrorOut, "description": "A field is not valid; detail names it"},
    500: {"model": ServerErrorOut, "description": "A server fault; the log has the error id"},
}


NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorOut, "description": "Unknown id"}}


def field_name(loc: Sequence[Any]) -> str:
    """``("body", "person", "age")`` -> ``"person.age"`` (list positions are left out)."""
    parts = [str(p) for p in loc if not isinstance(p, int)]
    if parts and parts[0] in {"body", "query", "path", "header", "cookie"}:
        parts = parts[1:]
    return ".".join(parts) or "body"


def plain(error: Mapping[str, Any]) -> str:
    """What is wrong, in words that follow the field's name (or a whole sentence)."""
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    where = field_name(error.get("loc", ()))
    if kind in SENTENCE_TYPES:
        return str(error.get("msg", ""))
    if where.endswith("age") and kind in AGE_TYPES:
        return AGE_MESSAGE
    if kind == "missing":
        if where in EMPTY_REPORT_FIELDS:
            return EMPTY_REPORT_MESSAGE
        return "is required"
    if kind == "string_too_long":
        return f"is longer than {ctx.get('max_length', 0):,} characters"
    if kind == "too_long" and ctx.get("field_type") == "List":
        return f"has more than {ctx.get('max_length', 0):,} items"
    if kind == "too_long":  # a length bound checked after a custom validator
        return f"is longer than {ctx.get('max_length', 0):,} characters"
    if kind == "string_too_short":
        return "must not be empty"
    if kind in {"string_type", "string_unicode"}:
        return "must be text"
    if kind == "enum":
        return f"must be one of: {ctx.get('expected', '')}"
    if kind == "extra_forbidden":
        return "is not a field Trace knows"
    if kind == "json_invalid":
        return "is not valid JSON"
    if kind.startswith("datetime"):
        return "must be a time such as 2026-07-15T07:30:00Z"
    if kind in {"greater_than_equal", "less_than_equal", "greater_than", "less_than"}:
        return str(error.get("msg", "")).replace("Input should be", "must be")
    if kind in {"int_parsing", "int_from_float", "int_type"}:
        return "must be a whole number"
    if kind in {"model_type", "model_attributes_type", "dict_type"}:
        return "must be a JSON object"
    if kind == "list_type":
        return "must be a list"
    msg = str(error.get("msg", "is not valid"))
    return msg.replace("Input should be", "must be").replace("Value error, ", "")


def sentence(error: Mapping[str, Any]) -> str:
    """The field's name and what is wrong with it."""
    text = plain(error)
    if str(error.get("type", "")) in SENTENCE_TYPES or text == EMPTY_REPORT_MESSAGE:
        return text
    return f"{field_name(error.get('loc', ()))} {text}"


def validation_body(errors: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    items = [
        {"loc": [p if isinstance(p, int) else str(p) for p in e.get("loc", ())], "msg": plain(e)}
        | {"type": str(e.get("type", ""))}
        for e in errors
    ]
    messages = list(dict.fromkeys(sentence(e) for e in errors))
    empty = bool(errors) and all(plain(e) == EMPTY_REPORT_MESSAGE for e in errors)
    if empty:
        code = "empty_report"
    elif errors and all(str(e.get("type", "")) in REPORT_RULE_TYPES for e in errors):
        code = "invalid_report"
    else:
        code = "invalid_body"
    return {"detail": "; ".join(messages) or "The request is not valid.", "code": code} | {
        "errors": items
    }


async def validation_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return JSONResponse(validation_body(exc.errors()), status_code=422)


async def http_error_handler(request: Request, exc: Exception) -> Response:
    """Starlette's HTTP errors (a body that is not JSON, an unknown path, a wrong method):
    ``{"detail", "code"}`` on the API, the error page elsewhere."""
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    if request.url.path.startswith("/api/"):
        detail = exc.detail if isinstance(exc.detail, str) else "The request was refused."
        return JSONResponse(
            {"detail": detail, "code": f"http_{exc.status_code}"},
            status_code=exc.status_code,
            headers=headers,
        )
    titles = {404: "Not found", 405: "Method not allowed"}
    response = render(
        request,
        "error.html",
        {"title": titles.get(exc.status_code, "Request refused"), "message": str(exc.detail)},
        exc.status_code,
    )
    response.headers.update(headers)
    return response
