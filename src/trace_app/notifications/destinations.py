"""Where Trace may send a partner's webhook: not into the server's own network.

A coordinator types a webhook's URL. Unchecked, Trace would POST to whatever it names,
services that listen only inside the server's network included (the database, a cache,
a cloud's metadata address): a server-side request forgery. So a destination whose
address is loopback, private, link-local, shared, reserved, multicast or unspecified is
refused:

- at registration, when the URL writes its host as such an address or as ``localhost``
  (no name is looked up there: a registration never waits on DNS);
- at every sending, after the host name is resolved (a name can point anywhere, and can
  change): the delivery is dead at once, with a reason that says so.

``TRACE_WEBHOOK_PRIVATE_ADDRESSES=allow`` lifts the rule for a partner inside the same
network (and for tests, whose receivers listen on 127.0.0.1).

Not guaranteed: httpx resolves the name again when it connects, so a name whose answers
change within that moment could slip through. Register the partner by a name you trust,
or by its public address.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def is_inside(address: IpAddress) -> bool:
    """Whether ``address`` is not a public unicast address of the internet."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


def written_inside(url: str) -> bool:
    """Whether the URL's host, as written, is ``localhost`` or an address inside (no
    lookup)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return is_inside(ipaddress.ip_address(host))
    except ValueError:
        return False  # a name: checked when sending, after it is resolved


def resolved_inside(url: str) -> str | None:
    """The first address inside that the URL's host resolves to, or None (none of them
    is, or the name does not resolve: sending then fails as any unreachable host does)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if written_inside(url):
        return host
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    for *_, sockaddr in answers:
        text = str(sockaddr[0]).split("%", 1)[0]  # an IPv6 zone index is not an address
        try:
            if is_inside(ipaddress.ip_address(text)):
                return text
        except ValueError:
            continue
    return None
