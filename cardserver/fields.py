"""Serializer fields that read exactly what the OpenAPI schema says they take."""

from __future__ import annotations

from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """A JSON string, as the schema's ``string`` says; DRF's own turns a number into one."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)
