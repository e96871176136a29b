"""Template tags of the pages: card faces, result lines, small formatting helpers."""

from __future__ import annotations

from django import template
from django.utils.html import json_script
from django.utils.safestring import mark_safe

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
