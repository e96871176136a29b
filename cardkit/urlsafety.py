"""Refuse bot URLs that lead into the arena's own network.

A bot URL is chosen by its author, so without a check the server could be made to POST to
``http://127.0.0.1:6379/``, to a cloud metadata service at 169.254.169.254, or to any host
of a private network. The check runs after name resolution, on every address the name
resolves to, and the caller then connects only to the addresses checked (see
``cardkit.protocol``), so a name that resolves to a public address at check time and to a
private one at connect time (DNS rebinding) gains nothing.

Pure Python: no Django. Whether private addresses are allowed is an argument, which the
caller takes from the ``BOTS_ALLOW_PRIVATE_URLS`` setting (on in development and tests).
"""

from __future__ import annotations

import concurrent.futures
import ipaddress
import re
import socket
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

SCHEMES = {"http": 80, "https": 443}

# Every range a bot may not live in, with the name given in the refusal. ``is_global``
# below catches the rest of the IANA special-purpose registry; this list makes the common
# cases say what they are, and keeps them refused whatever the Python version's idea of
# ``is_global`` (it changed in 3.11.10 and 3.12.4).
_BLOCKED = tuple(
    (ipaddress.ip_network(network), name)
    for network, name in (
        ("0.0.0.0/8", "'this network' (0.0.0.0/8)"),
        ("10.0.0.0/8", "private (10.0.0.0/8)"),
        ("100.64.0.0/10", "carrier-grade NAT (100.64.0.0/10)"),
        ("127.0.0.0/8", "loopback (127.0.0.0/8)"),
        ("169.254.0.0/16", "link-local (169.254.0.0/16)"),
        ("172.16.0.0/12", "private (172.16.0.0/12)"),
        ("192.0.0.0/24", "IETF protocol assignments (192.0.0.0/24)"),
        ("192.168.0.0/16", "private (192.168.0.0/16)"),
        ("198.18.0.0/15", "benchmarking (198.18.0.0/15)"),
        ("224.0.0.0/4", "multicast (224.0.0.0/4)"),
        ("240.0.0.0/4", "reserved (240.0.0.0/4)"),
        ("::/128", "unspecified (::)"),
        ("::1/128", "loopback (::1)"),
        ("64:ff9b:1::/48", "local-use NAT64 (64:ff9b:1::/48)"),
        ("100::/64", "discard-only (100::/64)"),
        ("fc00::/7", "unique-local (fc00::/7)"),
        ("fe80::/10", "link-local (fe80::/10)"),
        ("fec0::/10", "site-local (fec0::/10)"),
        ("ff00::/8", "multicast (ff00::/8)"),
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")

# What inet_aton would read as an IPv4 address although it is not written as one:
# "2130706433", "0x7f000001", "0177.0.0.1", "127.1".
_NUMERIC_HOST = re.compile(r"[0-9a-fA-FxX.]+")

# Name resolution runs in these threads when it has a time limit, so that a slow DNS
# server of a bot's domain cannot hold the caller past the move's deadline.
_RESOLVERS = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="bot-dns")


class UnsafeBotURL(ValueError):
    """A bot URL the server refuses to call; ``reason`` says why, for its author."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_bot_url(url: str) -> tuple[str, str, int]:
    """Return ``(scheme, host, port)`` of an http(s) URL; raise UnsafeBotURL otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeBotURL(f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise UnsafeBotURL(f"the URL must start with http:// or https://, not {scheme!r}")
    if parts.username is not None or parts.password is not None:
        raise UnsafeBotURL("the URL must not contain a user name or password")
    host = parts.hostname
    if not host:
        raise UnsafeBotURL("the URL has no host")
    if "%" in host:
        raise UnsafeBotURL("IPv6 zone identifiers are not allowed in bot URLs")
    return scheme, host, port if port is not None else SCHEMES[scheme]


def literal_address(host: str) -> IPAddress | None:
    """Return the address ``host`` names without DNS, in any spelling; None for a name.

    Numeric spellings that are not dotted quads ("2130706433", "0x7f000001", "127.1") are
    read the way the C resolver reads them, so they are checked as what they mean.
    """
    host = host.strip("[]")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _NUMERIC_HOST.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def address_problem(ip: IPAddress) -> str | None:
    """Return why a bot may not live at ``ip`` (None: it may).

    An IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64,
    6to4, Teredo) is refused when the IPv4 address inside is.
    """
    for network, name in _BLOCKED:
        if ip.version == network.version and ip in network:
            return name
    if isinstance(ip, ipaddress.IPv6Address):
        for label, inner in _embedded_ipv4(ip):
            problem = address_problem(inner)
            if problem:
                return f"{label} {inner}, which is {problem}"
    if not ip.is_global or ip.is_multicast or ip.is_reserved:
        return "not a globally routable address"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    found = []
    if ip.ipv4_mapped:
        found.append(("IPv4-mapped address of", ip.ipv4_mapped))
    if ip.sixtofour:
        found.append(("6to4 address of", ip.sixtofour))
    if ip.teredo:
        server, client = ip.teredo
        found += [("Teredo address with server", server), ("Teredo address of", client)]
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _NAT64:
        found.append(("NAT64 address of", low))
    elif ip in _IPV4_COMPATIBLE:
        found.append(("IPv4-compatible address of", low))
    return found


def resolve_host(
    host: str, port: int, *, allow_private: bool, timeout: float | None = None
) -> list[tuple[str, int]]:
    """Return every ``(ip, port)`` that ``host`` resolves to, once all of them are checked.

    Raise UnsafeBotURL when one of them is not globally routable (unless ``allow_private``),
    TimeoutError when resolution takes longer than ``timeout`` seconds, and OSError
    (``socket.gaierror``) when the name does not resolve.
    """
    literal = literal_address(host)
    ips = [str(literal)] if literal is not None else _resolve(host, port, timeout)
    if not allow_private:
        for ip in ips:
            problem = address_problem(ipaddress.ip_address(ip))
            if problem:
                shown = host if host == ip else f"{host} resolves to {ip}, which"
                raise UnsafeBotURL(f"{shown} is {problem}; bots must be on the public internet")
    return [(ip, port) for ip in ips]


def resolve_safe(
    url: str, allow_private: bool, *, timeout: float | None = None
) -> list[tuple[str, int]]:
    """Return every ``(ip, port)`` the URL's host resolves to; raise UnsafeBotURL if unsafe.

    Check a URL when a bot is registered; the caller checks again at every connection.
    """
    _scheme, host, port = parse_bot_url(url)
    return resolve_host(host, port, allow_private=allow_private, timeout=timeout)


def _resolve(host: str, port: int, timeout: float | None) -> list[str]:
    if timeout is None:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    else:
        future = _RESOLVERS.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
        try:
            infos = future.result(timeout=max(timeout, 0))
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"resolving {host} took longer than {timeout:.2f} s") from None
    ips = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not ips:
        raise socket.gaierror(f"{host} resolves to no address")
    return ips
