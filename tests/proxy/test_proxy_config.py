"""docker/nginx/ and compose's proxy service agree with the app (no Docker engine here:
compose's file is checked as data; `docker compose config` needs the CLI plugin)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import types

import yaml

from benchmarks.compose import COMPOSE, substitute
from tests.processes import BASE_DIR, run_python

NGINX = BASE_DIR / "docker" / "nginx"
TEMPLATE = (NGINX / "templates" / "default.conf.template").read_text()
SPLIT = yaml.safe_load((BASE_DIR / "docker" / "compose.split.yaml").read_text())


def _proxy_script() -> types.ModuleType:
    loader = importlib.machinery.SourceFileLoader("proxy_script", str(BASE_DIR / "scripts/proxy"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def test_compose_puts_the_proxy_in_front_of_web_and_web_nowhere_else():
    services = COMPOSE["services"]
    proxy = services["proxy"]

    assert proxy["image"].startswith("nginx:")
    assert proxy["ports"] == ["${WEB_PORT:-8000}:80"]
    assert "ports" not in services["web"]
    assert proxy["depends_on"] == {"web": {"condition": "service_healthy"}}
    for mount in proxy["volumes"]:
        source, target, _ = mount.split(":")
        assert (BASE_DIR / "docker" / source).exists(), source
        assert target in ("/etc/nginx/nginx.conf", "/etc/nginx/templates")


def test_the_proxy_service_gives_every_variable_of_its_template():
    used = set(re.findall(r"\$\{(\w+)\}", TEMPLATE))

    assert used == set(COMPOSE["services"]["proxy"]["environment"])


def test_the_app_trusts_one_proxy_and_both_take_the_same_body_limits():
    app = COMPOSE["services"]["web"]["environment"]
    proxy = COMPOSE["services"]["proxy"]["environment"]

    assert substitute(app["API_NUM_PROXIES"], {}) == "1"
    for name in ("API_MAX_BODY_SIZE", "DATA_UPLOAD_MAX_MEMORY_SIZE"):
        assert proxy[name] == app[name]


def test_the_body_limits_by_default_are_the_app_s_defaults(tmp_path):
    app = run_python(
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.API_MAX_BODY_SIZE, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)",
        tmp_path,
        DJANGO_SETTINGS_MODULE="cardserver.settings",
    )
    limits = _proxy_script().BODY_LIMITS
    compose = COMPOSE["services"]["proxy"]["environment"]

    assert app.stdout.split() == [str(limits["API_MAX_BODY_SIZE"]),
                                  str(limits["DATA_UPLOAD_MAX_MEMORY_SIZE"])]  # fmt: skip
    for name, value in limits.items():
        assert substitute(compose[name], {}) == str(value)


def test_the_proxy_passes_through_unbuffered_the_paths_the_app_holds():
    from cardserver.asgi import LIVE_PATH

    live = re.search(r"location ~ (\S+) \{(.*?)\n    \}", TEMPLATE, re.DOTALL)

    assert live.group(1) == LIVE_PATH.pattern
    assert "proxy_buffering off;" in live.group(2)


def test_the_script_fills_in_the_template_as_the_image_s_envsubst_does():
    filled = _proxy_script().envsubst(
        "listen ${PROXY_LISTEN}; set $x $remote_addr; ${OTHER}", {"PROXY_LISTEN": "1.2.3.4:5"}
    )

    assert filled == "listen 1.2.3.4:5; set $x $remote_addr; ${OTHER}"


def test_the_waiting_routes_go_to_the_live_upstream_and_the_rest_to_the_arena_s():
    from cardserver.asgi import LIVE_PATH

    filled = _proxy_script().envsubst(
        TEMPLATE, {"ARENA_UPSTREAM": "10.0.0.1:1", "LIVE_UPSTREAM": "10.0.0.2:2"}
    )
    upstreams = dict(re.findall(r"upstream (\w+) \{\s*server (\S+);", filled))
    routes = {
        where.strip(): re.search(r"proxy_pass http://(\w+);", body).group(1)
        for where, body in re.findall(r"location ([^{]+)\{(.*?)\n    \}", filled, re.DOTALL)
        if "proxy_pass" in body
    }

    assert upstreams == {"arena": "10.0.0.1:1", "live": "10.0.0.2:2"}
    assert routes == {"/": "arena", "/api/": "arena", f"~ {LIVE_PATH.pattern}": "live"}


def test_compose_s_split_shape_puts_a_gthread_api_behind_the_proxy_and_streams_on_web():
    api = COMPOSE["services"]["api"]
    proxy = COMPOSE["services"]["proxy"]["environment"]

    assert api["profiles"] == ["split"]
    assert api["command"][3:6] == ["cardserver.wsgi", "--worker-class", "gthread"]
    assert "ports" not in api
    assert (proxy["ARENA_UPSTREAM"], proxy["LIVE_UPSTREAM"]) == ("web:8000", "web:8000")
    assert SPLIT["services"]["proxy"]["environment"] == {"ARENA_UPSTREAM": "api:8000"}
    assert SPLIT["services"]["proxy"]["depends_on"] == {"api": {"condition": "service_healthy"}}
