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
    username = forms.CharField(max_length=150)
    password = forms.CharField(widget=forms.PasswordInput, min_length=1)
