"""Bot URLs that lead into private networks are refused before any connection is opened.

Name resolution is patched, and so is every way to open a socket: these tests send no
traffic at all.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable

import pytest

from cardkit.caller import BotCaller
from cardkit.protocol import Fault
from cardkit.urlsafety import (
    UnsafeBotURL,
    address_problem,
    literal_address,
    resolve_host,
    resolve_safe,
)

PUBLIC_V4 = "93.184.215.14"
PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"

# What the patched resolver answers for each name.
DNS = {
    "bot.example": [PUBLIC_V4, PUBLIC_V6],
    "localhost.example": ["127.0.0.1", "::1"],
    "intranet.example": ["10.0.0.5"],
    "router.example": ["192.168.1.1"],
    "docker.example": ["172.17.0.2"],
    "metadata.example": ["169.254.169.254"],
    "cgnat.example": ["100.64.0.1"],
    "ula.example": ["fd12:3456::1"],
    "mapped.example": ["::ffff:127.0.0.1"],
    "half-private.example": [PUBLIC_V4, "10.1.2.3"],
}


def fake_getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
    try:
        ips = DNS[host]
    except KeyError:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
    return [
        (
            socket.AF_INET6 if ":" in ip else socket.AF_INET,
            socket.SOCK_STREAM,
            6,
            "",
            (ip, port, 0, 0) if ":" in ip else (ip, port),
        )
        for ip in ips
    ]


@pytest.fixture
def no_network(monkeypatch) -> list[str]:
    """Patch name resolution to ``DNS`` and fail the test if a socket tries to connect.

    Return the list of names looked up.
    """
    lookups: list[str] = []

    def getaddrinfo(host, *args, **kwargs):
        lookups.append(host)
        return fake_getaddrinfo(host, *args, **kwargs)

    def connect(*args, **kwargs):
        pytest.fail(f"a connection was opened: {args[1:] or args}")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", connect)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect)
    return lookups


REFUSED = [
    # loopback
    "http://127.0.0.1:9001/",
    "http://127.8.9.10/",
    "http://[::1]:9001/",
    "http://localhost.example/",
    # private
    "http://10.0.0.1/",
    "http://intranet.example/",
    "http://172.16.0.1/",
    "http://172.31.255.254/",
    "http://docker.example/",
    "http://192.168.0.1/",
    "http://router.example/",
    # link-local, including the cloud metadata service
    "http://169.254.169.254/latest/meta-data/",
    "http://metadata.example/",
    "http://[fe80::1]/",
    # carrier-grade NAT
    "http://100.64.0.1/",
    "http://100.127.255.254/",
    "http://cgnat.example/",
    # unique-local
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://ula.example/",
    # IPv4 inside IPv6
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://mapped.example/",
    "http://[2002:7f00:1::1]/",
    "http://[64:ff9b::a00:1]/",
    "http://[::127.0.0.1]/",
    # numeric spellings of 127.0.0.1 and 10.0.0.1
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0x7F.0.0.1/",
    "http://0177.0.0.1/",
    "http://017700000001/",
    "http://127.1/",
    "http://167772161/",
    # multicast, unspecified, broadcast, reserved, documentation
    "http://224.0.0.1/",
    "http://[ff02::1]/",
    "http://0.0.0.0/",
    "http://[::]/",
    "http://255.255.255.255/",
    "http://240.0.0.1/",
    "http://192.0.2.10/",
    # one private address among public ones is enough
    "http://half-private.example/",
]


@pytest.mark.parametrize("url", REFUSED)
def test_url_into_a_private_network_is_refused(no_network, url):
    with pytest.raises(UnsafeBotURL):
        resolve_safe(url, allow_private=False)


@pytest.mark.parametrize("url", REFUSED)
def test_caller_refuses_before_connecting(no_network, url):
    with BotCaller(allow_private=False) as caller:
        answer = caller.request_move(url, "secret", {"type": "move", "protocol": 1}, 1.0)
    assert answer.fault == Fault.UNSAFE_URL, answer


def test_refusal_names_the_address_and_its_range(no_network):
    with pytest.raises(UnsafeBotURL, match=r"metadata\.example resolves to 169\.254\.169\.254.*"):
        resolve_safe("http://metadata.example/", allow_private=False)
    with pytest.raises(UnsafeBotURL, match=r"IPv4-mapped address of 127\.0\.0\.1.*loopback"):
        resolve_safe("http://[::ffff:127.0.0.1]/", allow_private=False)


def test_numeric_spellings_are_read_without_dns(no_network):
    for host in ("2130706433", "0x7f000001", "0177.0.0.1", "127.1"):
        assert literal_address(host) == ipaddress.ip_address("127.0.0.1")
    assert literal_address("cafe.example") is None
    assert no_network == []


def test_public_addresses_pass(no_network):
    assert resolve_safe("https://bot.example/play", allow_private=False) == [
        (PUBLIC_V4, 443),
        (PUBLIC_V6, 443),
    ]
    assert resolve_safe(f"http://{PUBLIC_V4}:8080/", allow_private=False) == [(PUBLIC_V4, 8080)]
    assert resolve_safe(f"http://[{PUBLIC_V6}]/", allow_private=False) == [(PUBLIC_V6, 80)]


@pytest.mark.parametrize("ip", [PUBLIC_V4, PUBLIC_V6, "8.8.8.8", "2002:808:808::1"])
def test_global_addresses_have_no_problem(ip):
    assert address_problem(ipaddress.ip_address(ip)) is None


def test_private_addresses_pass_when_the_setting_allows_them(no_network):
    assert resolve_safe("http://localhost.example:9001/", allow_private=True) == [
        ("127.0.0.1", 9001),
        ("::1", 9001),
    ]
    assert resolve_safe("http://2130706433:9001/", allow_private=True) == [("127.0.0.1", 9001)]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://bot.example/", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("bot.example:9001", "http:// or https://"),
        ("http:///path", "no host"),
        ("http://user:pass@bot.example/", "user name or password"),
        ("http://bot.example@127.0.0.1/", "user name or password"),
        ("http://[fe80::1%25eth0]/", "zone"),
        ("http://bot.example:99999/", "not a valid URL"),
    ],
)
def test_malformed_or_odd_urls_are_refused(no_network, url, message):
    with pytest.raises(UnsafeBotURL, match=message):
        resolve_safe(url, allow_private=True)


def test_unknown_name_is_a_resolution_error(no_network):
    with pytest.raises(socket.gaierror):
        resolve_safe("http://nowhere.example/", allow_private=False)


def test_slow_resolution_is_cut_at_the_timeout(monkeypatch):
    def slow_getaddrinfo(*args, **kwargs):
        time.sleep(1)
        return fake_getaddrinfo(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_getaddrinfo)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        resolve_host("bot.example", 80, allow_private=False, timeout=0.2)
    assert time.monotonic() - started < 0.5


@pytest.fixture
def rebinding_dns(monkeypatch) -> Callable[[list[list[str]]], list[tuple]]:
    """Return ``answer(sequence)``: each lookup of rebind.example gets the next answer.

    Connections are recorded and refused, so nothing leaves the machine.
    """
    attempts: list[tuple] = []

    def answer(sequence: list[list[str]]) -> list[tuple]:
        answers = iter(sequence)

        def getaddrinfo(host, port, *args, **kwargs):
            DNS["rebind.example"] = next(answers)
            return fake_getaddrinfo(host, port, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        return attempts

    def create_connection(address, *args, **kwargs):
        attempts.append(address)
        raise ConnectionRefusedError("refused by the test")

    monkeypatch.setattr(socket, "create_connection", create_connection)
    monkeypatch.setitem(DNS, "rebind.example", [])
    return answer


def test_dns_rebinding_between_calls_is_refused(rebinding_dns):
    attempts = rebinding_dns([[PUBLIC_V4], ["127.0.0.1"], ["127.0.0.1"]])
    with BotCaller(allow_private=False) as caller:
        first = caller.request_move("http://rebind.example/", "s", {"type": "move"}, 1.0)
        second = caller.request_move("http://rebind.example/", "s", {"type": "move"}, 1.0)
    # The first call connects to the public address it checked; its one retry resolves
    # again, gets 127.0.0.1, and is refused. So is the next call, before connecting.
    assert attempts == [(PUBLIC_V4, 80)]
    assert first.fault == Fault.UNSAFE_URL
    assert second.fault == Fault.UNSAFE_URL


def test_connection_goes_to_the_address_checked(rebinding_dns):
    attempts = rebinding_dns([[PUBLIC_V4], [PUBLIC_V4]])
    with BotCaller(allow_private=False) as caller:
        answer = caller.request_move("http://rebind.example:8080/", "s", {"type": "move"}, 1.0)
    assert answer.fault == Fault.CONNECTION_ERROR
    assert attempts == [(PUBLIC_V4, 8080)] * 2
