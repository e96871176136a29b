"""Forms of the pages: the archive's filters and sign-up."""

from __future__ import annotations

from datetime import timedelta

from django import forms

from games.models import Match

ANY = [("", "Any")]


class ArchiveFilterForm(forms.Form):
    """What a person types into the archive's filter bar.

    ``filter_data`` turns it into the query of ``games.filters.MatchFilter``, the filter
    of the matches API, so the page and the API select the same matches.
    """

    game = forms.ChoiceField(choices=ANY + Match.Game.choices, required=False)
    bot = forms.CharField(
        required=False, max_length=81, widget=forms.TextInput(attrs={"list": "bot-names"}),
        help_text="A bot's name, or name@label for one of its versions.",
    )
    opponent = forms.CharField(
        required=False, max_length=40, label="Against",
        widget=forms.TextInput(attrs={"list": "bot-names"}),
    )
    player = forms.CharField(required=False, max_length=150, label="Player")
    result = forms.ChoiceField(
        choices=ANY + [("decided", "Decided"), ("drawn", "Drawn"), ("forfeit", "Forfeit")],
        required=False,
    )
    status = forms.ChoiceField(choices=ANY + Match.Status.choices, required=False)
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def filter_data(self) -> dict[str, str]:
        data = self.cleaned_data
        query: dict[str, str] = {}
        for name, param in (
            ("game", "game"), ("bot", "bot"), ("opponent", "opponent"), ("player", "user")
        ):
            if data.get(name):
                query[param] = data[name].strip()
        if data.get("status"):
            query["status"] = data["status"]
        if data.get("result") in ("decided", "drawn"):
            query["result"] = data["result"]
        if data.get("since"):
            query["created_after"] = data["since"].isoformat()
        if data.get("until"):
            query["created_before"] = (data["until"] + timedelta(days=1)).isoformat()
        return query


class SignupForm(forms.Form):
    # Password managers fill and save the right fields when told what each one is.
    username = forms.CharField(
        max_length=150, widget=forms.TextInput(attrs={"autocomplete": "username"})
    )
    password = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}), min_length=1
    )


GAME_CHOICES = Match.Game.choices


class BotRegisterForm(forms.Form):
    """Register a bot from "My bots": what ``bots.services.bot_register`` takes."""

    name = forms.CharField(
        max_length=40, widget=forms.TextInput(attrs={"autocomplete": "off"}),
        help_text="2-40 letters, digits, '_', '.' or '-'.",
    )  # fmt: skip
    kind = forms.ChoiceField(
        choices=[("http", "HTTP (the arena calls your URL)"),
                 ("client", "Client (your bot calls the API with its token)")],
        initial="http", widget=forms.RadioSelect,
    )  # fmt: skip
    games = forms.MultipleChoiceField(
        choices=GAME_CHOICES, widget=forms.CheckboxSelectMultiple, initial=["durak"]
    )
    url = forms.CharField(
        required=False, max_length=500, label="URL",
        widget=forms.URLInput(attrs={"placeholder": "https://bot.example.org/move",
                                     "autocomplete": "url"}),
        help_text="HTTP bots: where the arena POSTs its requests.",
    )  # fmt: skip
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class BotEditForm(forms.Form):
    games = forms.MultipleChoiceField(choices=GAME_CHOICES, widget=forms.CheckboxSelectMultiple)
    url = forms.CharField(
        required=False, max_length=500, label="URL",
        widget=forms.URLInput(attrs={"autocomplete": "url"}),
    )  # fmt: skip
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class BotVersionForm(forms.Form):
    label = forms.CharField(
        max_length=40, label="New version",
        widget=forms.TextInput(attrs={"placeholder": "v2", "autocomplete": "off"}),
    )  # fmt: skip


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=60, required=False,
        widget=forms.TextInput(attrs={"placeholder": "laptop, CI, my bot", "autocomplete": "off"}),
    )  # fmt: skip
