"""The OpenAI-compatible adapter's transport: TLS is verified wherever TLS is spoken."""

from __future__ import annotations

import ssl

import pytest

from modelgate.providers import OpenAICompatibleProvider, ProviderConfig


def _context(base_url: str) -> ssl.SSLContext:
    provider = OpenAICompatibleProvider(ProviderConfig(name="p", base_url=base_url, model="m"))
    transport = provider._default_transport()
    context: ssl.SSLContext = transport._pool._ssl_context  # type: ignore[assignment]
    return context


@pytest.mark.parametrize("base_url", ["https://api.example.test/v1", "HTTPS://Example.TEST/v1"])
def test_https_base_urls_verify_certificates_and_host_names(base_url: str) -> None:
    context = _context(base_url)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname


def test_plain_http_base_url_skips_the_certificate_store() -> None:
    # no request of this provider can reach TLS: one URL, redirects not followed
    context = _context("http://127.0.0.1:8765/v1")
    assert context.verify_mode == ssl.CERT_NONE
