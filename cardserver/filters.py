"""Query-parameter filters that read exactly what the OpenAPI schema says they take."""

from __future__ import annotations

import django_filters
from django import forms
from django.core.exceptions import ValidationError


class StrictBooleanField(forms.Field):
    """``true`` or ``false``, the schema's boolean; anything else is an error (400).

    django-filter's own boolean reads any other value (``null``, ``yes``, ``2``) as "no
    filter", so a client's typo would silently list everything.
    """

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if value in ("true", "false"):
            return value == "true"
        raise ValidationError("Give true or false.", code="invalid")


class BooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class IntegerFilter(django_filters.NumberFilter):
    """A whole number, as the schema's integer says (django-filter's takes any decimal)."""

    field_class = forms.IntegerField
