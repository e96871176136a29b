"""Pagination that never counts the whole archive.

A page of the archive costs one index walk; counting a table of a million matches costs a
sequential scan of it, at every request. So:

- ``ArchiveCursorPagination`` (the match archive, ``GET /api/v1/matches/``) pages with an
  opaque cursor on an indexed order, newest first: ``next`` and ``previous`` are links a
  client follows, and there is no ``count``.
- A client that still asks for ``?page=N`` (the archive's pagination before cursors) is
  served the page as before, with ``count`` capped at ``COUNT_CAP`` (``count_capped``
  says so), up to page ``COUNT_CAP / PAGE_SIZE``; a page beyond is refused with 400 and a
  message that says to follow ``next``.
- ``CheckedCursorPagination`` is DRF's, refusing a cursor it did not make with 400; a
  bot's rating history (``tournaments.views``) pages with it too.
- ``CappedPageNumberPagination`` (every other list of the API) and ``CappedPaginator``
  (the web pages) page by number and count at most ``COUNT_CAP + 1`` rows: a list longer
  than that says "10,000+".
"""

from __future__ import annotations

from django.core.paginator import Paginator
from django.utils.functional import cached_property
from rest_framework import pagination
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

COUNT_CAP = 10_000


class CappedPaginator(Paginator):
    """Django's paginator whose count stops at ``COUNT_CAP`` (or at ``cap``, when lower):
    past it, ``capped`` is true, ``count`` is the cap and the pages end there."""

    def __init__(self, *args, cap: int | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.cap = cap

    @cached_property
    def count(self) -> int:
        cap = COUNT_CAP if self.cap is None else min(self.cap, COUNT_CAP)
        # On a queryset, COUNT(*) of a subquery with LIMIT: it reads at most cap + 1 rows.
        head = self.object_list[: cap + 1]
        counted = len(head) if isinstance(head, list | tuple) else head.count()
        self._capped = counted > cap
        return min(counted, cap)

    @property
    def capped(self) -> bool:
        """Whether the list holds more than the cap (its count stopped)."""
        self.count  # noqa: B018 - counting sets _capped
        return self._capped

    @property
    def count_label(self) -> str:
        """The count as a page shows it: "10,000+" past the cap."""
        return f"{self.count:,}+" if self.capped else f"{self.count:,}"

    @property
    def pages_label(self) -> str:
        """The number of pages as a page shows it: "400+" past the cap."""
        return f"{self.num_pages:,}+" if self.capped else f"{self.num_pages:,}"


class CappedPageNumberPagination(pagination.PageNumberPagination):
    """``?page=N`` with a capped count (``count`` at most ``COUNT_CAP``, ``count_capped``)."""

    django_paginator_class = CappedPaginator

    def get_paginated_response(self, data) -> Response:
        response = super().get_paginated_response(data)
        response.data["count_capped"] = self.page.paginator.capped
        return response

    def get_paginated_response_schema(self, schema: dict) -> dict:
        answer = super().get_paginated_response_schema(schema)
        answer["properties"]["count"]["description"] = (
            f"Items in the list, at most {COUNT_CAP:,} (see `count_capped`)."
        )
        answer["properties"]["count_capped"] = {
            "type": "boolean",
            "description": f"The list holds more than {COUNT_CAP:,} items: `count` stops there.",
        }
        return answer


class CheckedCursorPagination(pagination.CursorPagination):
    """DRF's cursor pagination that answers a cursor it did not make with 400, as any
    other bad query value (DRF's own answers 404, as if the list were missing)."""

    def paginate_queryset(self, queryset, request, view=None):
        try:
            return super().paginate_queryset(queryset, request, view)
        except NotFound:
            raise ValidationError({"cursor": ["Invalid cursor: follow `next` as given."]}) from None


class ArchiveCursorPagination(CheckedCursorPagination):
    """The match archive, newest first, by cursor (``?cursor=``); ``?page=N`` as before,
    within the capped count (the module's docstring)."""

    # Newest first by id, the order matches are created in: the primary key's index
    # serves it, and a bot's matches (?bot=) are a walk of the seats' (bot, match) index
    # in the same order, merged with it, whatever the archive's size.
    ordering = ("-id",)
    page_size_query_param = None

    def __init__(self) -> None:
        self.legacy: CappedPageNumberPagination | None = None

    def paginate_queryset(self, queryset, request, view=None):
        if "page" in request.query_params:
            self.legacy = CappedPageNumberPagination()
            last = -(-COUNT_CAP // self.page_size)  # the pages the capped count covers
            number = request.query_params["page"]
            if number.isdigit() and int(number) > last:
                raise ValidationError({"page": [
                    f"Pages past {last} are not served by number: follow the `next` link "
                    "of the first page (a cursor) instead."
                ]})  # fmt: skip
            return self.legacy.paginate_queryset(queryset.order_by(*self.ordering), request, view)
        return super().paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data) -> Response:
        if self.legacy is not None:
            return self.legacy.get_paginated_response(data)
        return super().get_paginated_response(data)

    def get_paginated_response_schema(self, schema: dict) -> dict:
        answer = super().get_paginated_response_schema(schema)
        legacy = CappedPageNumberPagination().get_paginated_response_schema(schema)
        for name in ("count", "count_capped"):
            field = dict(legacy["properties"][name])
            field["description"] += " Only in answers to `?page=`."
            answer["properties"][name] = field
        answer["properties"]["next"]["description"] = (
            "The next (older) page: follow this link as it is."
        )
        return answer

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [
            *super().get_schema_operation_parameters(view),
            {
                "name": "page",
                "required": False,
                "in": "query",
                "description": (
                    "Deprecated: a page number, as before cursors, served up to page "
                    f"{COUNT_CAP // 50} with a count capped at {COUNT_CAP:,}. Follow `next`."
                ),
                "schema": {"type": "integer", "minimum": 1},
            },
        ]
