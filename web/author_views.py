"""The bot author's pages: "My bots" (register, edit, pause and resume, versions, the
secret), API tokens, each match's call log, and owners' profiles.

Every action is a service (``bots.services``, ``bots.versions``, ``accounts.tokens``) and
every read a selector; a credential is shown in the answer to the POST that made it,
once, never stored in the session or a message, and the page is not cached.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts import selectors as account_selectors
from accounts import tokens
from bots import selectors as bot_selectors
from bots import services as bot_services
from bots import versions
from bots.models import Bot, BotVersion
from web import author_selectors
from web.forms import BotEditForm, BotRegisterForm, BotVersionForm, TokenForm


def _own_bot(request: HttpRequest, name: str) -> Bot:
    """Return the signed-in user's bot of that name; 404 for anyone else's (or none)."""
    bot = None
    if request.user.is_authenticated:
        bot = bot_selectors.bot_owned(owner_id=request.user.pk, name=name)
    if bot is None:
        raise Http404("You have no bot of this name.")
    return bot


def _form_errors(form, exc: ValidationError) -> None:
    """Put a service's ValidationError on the form, by field where it names one."""
    if hasattr(exc, "error_dict"):
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, exc.messages)


def _credential(request: HttpRequest, bot: Bot, credential: str, made: str) -> HttpResponse:
    return render(
        request,
        "web/me_credential.html",
        {"bot": bot, "credential": credential, "made": made,
         "kind": "secret" if bot.kind == Bot.Kind.HTTP else "API token"},
    )  # fmt: skip


# --- My bots ----------------------------------------------------------------------------


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def my_bots(request: HttpRequest) -> HttpResponse:
    """The signed-in user's bots, and the form that registers one."""
    form = BotRegisterForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            bot, credential = bot_services.bot_register(
                owner=request.user, name=data["name"], kind=data["kind"], games=data["games"],
                url=data["url"] if data["kind"] == "http" else "",
                description=data["description"],
            )  # fmt: skip
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            return _credential(request, bot, credential, "registered")
    return render(
        request,
        "web/me_bots.html",
        {
            "bots": [
                (bot, author_selectors.bot_pauses(bot))
                for bot in author_selectors.bots_of_owner(request.user.pk)
            ],
            "form": form,
        },
    )


@never_cache
@login_required
def my_bot(request: HttpRequest, name: str) -> HttpResponse:
    bot = _own_bot(request, name)
    return _my_bot_page(request, bot)


def _my_bot_page(request, bot: Bot, *, edit=None, version=None, status: int = 200):
    return render(
        request,
        "web/me_bot.html",
        {
            "bot": bot,
            "pauses": author_selectors.bot_pauses(bot),
            "edit": edit or BotEditForm(
                initial={"games": bot.games, "url": bot.url, "description": bot.description}
            ),
            "version_form": version or BotVersionForm(),
            "versions": versions.bot_version_lines(bot=bot),
            "lines": author_selectors.bot_recent_matches(bot),
        },
        status=status,
    )


@login_required
@require_POST
def my_bot_edit(request: HttpRequest, name: str) -> HttpResponse:
    bot = _own_bot(request, name)
    form = BotEditForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            bot_services.bot_update(
                bot_id=bot.pk, games=data["games"], description=data["description"],
                url=data["url"] if bot.kind == Bot.Kind.HTTP else None,
            )  # fmt: skip
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, f"{bot.name} is saved.")
            return redirect("web:my-bot", name=bot.name)
    return _my_bot_page(request, bot, edit=form, status=400)


@login_required
@require_POST
def my_bot_enabled(request: HttpRequest, name: str, enabled: bool) -> HttpResponse:
    bot = _own_bot(request, name)
    bot_services.bot_set_enabled(bot_id=bot.pk, enabled=enabled)
    messages.success(
        request,
        f"{bot.name} is resumed: it may be offered matches again." if enabled
        else f"{bot.name} is paused: no new matches; matches under way go on.",
    )
    return redirect("web:my-bot", name=bot.name)


@login_required
@require_POST
def my_bot_version(request: HttpRequest, name: str) -> HttpResponse:
    bot = _own_bot(request, name)
    form = BotVersionForm(request.POST)
    if form.is_valid():
        try:
            versions.bot_version_start(
                bot_id=bot.pk, reason=BotVersion.Reason.OWNER, label=form.cleaned_data["label"]
            )
        except ValidationError as exc:
            form.add_error("label", exc.messages)
        else:
            messages.success(request, f"{bot.name}@{form.cleaned_data['label']} plays from now.")
            return redirect("web:my-bot", name=bot.name)
    return _my_bot_page(request, bot, version=form, status=400)


@login_required
@require_POST
def my_bot_ping(request: HttpRequest, name: str) -> HttpResponse:
    """Ping an HTTP bot now: a good answer makes an unhealthy bot healthy again."""
    bot = _own_bot(request, name)
    try:
        answer = bot_services.bot_ping(bot_id=bot.pk)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        if answer.ok:
            messages.success(request, f"{bot.name} answered the ping: it is healthy.")
        else:
            messages.error(
                request, f"{bot.name} did not answer well: {answer.fault} ({answer.detail})."
            )
    return redirect("web:my-bot", name=bot.name)


@never_cache
@login_required
@require_POST
def my_bot_rotate(request: HttpRequest, name: str) -> HttpResponse:
    bot = _own_bot(request, name)
    try:
        credential = bot_services.bot_credentials_rotate(bot_id=bot.pk)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("web:my-bot", name=bot.name)
    return _credential(request, bot, credential, "rotated")


# --- Call logs --------------------------------------------------------------------------


def _call_log(request: HttpRequest, name: str, pk: int) -> tuple[Bot, list[dict]]:
    """The owner's bot and its calls in match ``pk``; 404 to anyone else, signed in or
    not, and for a match the bot did not play."""
    bot = _own_bot(request, name)
    lines = bot_selectors.bot_call_log(bot=bot, match_id=pk)
    if lines is None:
        raise Http404("Your bot did not play this match.")
    return bot, lines


@never_cache
def my_bot_calls(request: HttpRequest, name: str, pk: int) -> HttpResponse:
    bot, lines = _call_log(request, name, pk)
    return render(
        request,
        "web/me_calls.html",
        {"bot": bot, "match": author_selectors.match_title(pk), "lines": lines},
    )


@never_cache
def my_bot_calls_jsonl(request: HttpRequest, name: str, pk: int) -> HttpResponse:
    """The call log as JSON lines, one call a line, as a download."""
    bot, lines = _call_log(request, name, pk)
    body = "".join(json.dumps(line, cls=DjangoJSONEncoder) + "\n" for line in lines)
    response = HttpResponse(body, content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{bot.name}-match-{pk}-calls.jsonl"'
    return response


# --- API tokens -------------------------------------------------------------------------


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def my_tokens(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None)
    made = None
    if request.method == "POST" and form.is_valid():
        try:
            token, key = tokens.token_create(user=request.user, name=form.cleaned_data["name"])
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            made = {"token": token, "key": key}
            form = TokenForm()
    return render(
        request,
        "web/me_tokens.html",
        {"tokens": account_selectors.token_list(user=request.user), "form": form, "made": made},
    )


@login_required
@require_POST
def my_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = account_selectors.token_of_user(user=request.user, token_id=pk)
    if token is None:
        raise Http404("You have no API token with this id.")
    tokens.token_revoke(token_id=token.pk)
    messages.success(request, f"The token “{token.name}” ({token.prefix}…) is revoked.")
    return redirect("web:my-tokens")


# --- Profiles ---------------------------------------------------------------------------


def profile(request: HttpRequest, username: str) -> HttpResponse:
    """An owner's public page: their bots."""
    owner = author_selectors.profile_user(username)
    if owner is None:
        raise Http404("No such user.")
    return render(
        request,
        "web/profile.html",
        {
            "owner": owner,
            "bots": [
                (bot, author_selectors.bot_pauses(bot))
                for bot in author_selectors.bots_of_owner(owner.pk)
            ],
        },
    )
