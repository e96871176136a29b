"""Template tags of the pages: card faces, result lines, small formatting helpers."""

from __future__ import annotations

import json
from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.html import format_html, json_script
from django.utils.safestring import mark_safe

from games.reading import match_forfeit_reason
from web import cards
from web.end_reasons import end_reasons_for_pages

register = template.Library()


@register.simple_tag
def card(code: str, size: str = "") -> str:
    """Draw one card face: ``{% card "TH" %}`` (sizes: ``sm``, ``lg``)."""
    return mark_safe(cards.card_html(code, size=size))


@register.simple_tag
def end_reasons_script() -> str:
    """The end reasons and their words for web/static/web/cards.js, as a JSON script
    element ``end-reasons``: on every page that loads cards.js."""
    return json_script(end_reasons_for_pages(), "end-reasons")


@register.simple_tag
def card_back(size: str = "") -> str:
    return mark_safe(cards.card_back_html(size=size))


@register.filter
def card_label(code: str) -> str:
    return cards.card_label(code)


@register.filter
def suit_symbol(suit: str) -> str:
    return cards.SUIT_SYMBOLS.get(suit, suit)


@register.filter
def as_json(value) -> str:
    """The value as compact JSON, as the API and the JSON lines download write it."""
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


@register.filter
def percent(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.{digits}f}%"


@register.filter
def signed(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:+.0f}"


@register.simple_tag(takes_context=True)
def nav_current(context, *names: str) -> str:
    """Mark a navigation link as the current page when the page's URL name is in ``names``."""
    match = getattr(context.get("request"), "resolver_match", None)
    if match is not None and match.url_name in names:
        return mark_safe('aria-current="page"')
    return ""


@register.filter
def forfeit_reason(match) -> str:
    """The match's forfeit reason if it may be read (``games.reading``)."""
    return match_forfeit_reason(match)


@register.filter
def when(moment: datetime | None) -> str:
    """Write a moment with its year and time zone, in a ``<time>`` a script can read.

    "Dec 6, 2026, 11:39 UTC": a page read next year, or from another zone, still says
    when it happened.
    """
    if moment is None:
        return ""
    local = timezone.localtime(moment) if timezone.is_aware(moment) else moment
    return format_html(
        '<time datetime="{}">{}</time>', local.isoformat(), date_format(local, "M j, Y, H:i T")
    )
