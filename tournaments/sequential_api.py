"""The sequential tests API: start one, list and read them, cancel one.

Anyone may read a test; a signed-in user may start one of their own bots against their
own or the built-in ones (staff: any bots); its creator or staff may cancel it.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, permissions, serializers, status
from rest_framework.exceptions import PermissionDenied, Throttled, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from cardkit.stats.sprt import MODELS
from cardserver.api_errors import error_answer
from games.models import Match
from tournaments import sequential
from tournaments.models import SequentialTest


def sequential_test_errors_answer() -> None:
    """Answer a sequential test that cannot be created as asked, in any view of the
    API: not allowed (403), over the quota (429), else a validation error (400)
    (``TournamentsConfig.ready``)."""
    error_answer(sequential.SequentialTestForbidden, lambda exc: PermissionDenied(str(exc)))
    error_answer(sequential.SequentialTestQuota, lambda exc: Throttled(detail=str(exc)))
    error_answer(sequential.SequentialTestError, lambda exc: ValidationError([str(exc)]))


class SequentialTestCreateSerializer(serializers.Serializer):
    candidate = serializers.CharField(max_length=81, help_text="`bot` or `bot@label`.")
    baseline = serializers.CharField(max_length=81, help_text="`bot` or `bot@label`.")
    game = serializers.ChoiceField(choices=Match.Game.choices, default="durak")
    players = serializers.IntegerField(min_value=2, max_value=6, default=2)
    mode = serializers.ChoiceField(
        choices=SequentialTest.Mode.choices, default=SequentialTest.Mode.HEAD_TO_HEAD
    )
    reference = serializers.CharField(
        max_length=40, default="greedy", help_text="Reference mode: the built-in bot in "
        "the other seats.",
    )  # fmt: skip
    elo0 = serializers.FloatField(
        required=False, min_value=-1000, max_value=1000, help_text="Default 0."
    )
    elo1 = serializers.FloatField(
        required=False, min_value=-1000, max_value=1000, help_text="Default 20."
    )
    alpha = serializers.FloatField(
        required=False, min_value=0.0001, max_value=0.4999, help_text="Default 0.05."
    )
    beta = serializers.FloatField(
        required=False, min_value=0.0001, max_value=0.4999, help_text="Default 0.05."
    )
    model = serializers.ChoiceField(choices=list(MODELS), default="normalized")
    max_games = serializers.IntegerField(required=False, help_text="Default 4,000.")
    move_time_limit = serializers.FloatField(
        required=False, min_value=0.1, max_value=60, help_text="Seconds per move (5)."
    )


class SequentialTestSerializer(serializers.ModelSerializer):
    candidate = serializers.SerializerMethodField()
    baseline = serializers.SerializerMethodField()
    reference = serializers.SlugRelatedField(slug_field="name", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    statistic = serializers.SerializerMethodField()
    matches = serializers.SerializerMethodField(
        help_text="A finished test's match ids, in the order played (null while it runs)."
    )

    class Meta:
        model = SequentialTest
        fields = [
            "id", "candidate", "baseline", "reference", "game", "players", "mode", "model",
            "elo0", "elo1", "alpha", "beta", "max_games", "move_time_limit", "status",
            "statistic", "llr_history", "pairs_created", "created_by", "created_at",
            "finished_at", "matches",
        ]  # fmt: skip
        read_only_fields = fields

    def get_candidate(self, test: SequentialTest) -> str:
        return _named(test.candidate, test.candidate_version)

    def get_baseline(self, test: SequentialTest) -> str:
        return _named(test.baseline, test.baseline_version)

    def get_statistic(self, test: SequentialTest) -> dict:
        """counts (pairs scoring 0, 0.5, 1, 1.5, 2), pairs, games, llr with its bounds
        llr_lower/llr_upper, elo with its 95% interval, nelo, los."""
        return sequential.sequential_test_summary(test)

    def get_matches(self, test: SequentialTest) -> list[int] | None:
        if test.status == SequentialTest.Status.RUNNING:
            return None
        listed = self.context.get("matches")  # a list's, read for its page at once
        if listed is not None:
            return listed.get(test.pk, [])
        return sequential.sequential_test_matches(test)


def _named(bot, version) -> str:
    return f"{bot.name}@{version.label}" if version is not None else bot.name


def _tests():
    return SequentialTest.objects.select_related(
        "candidate", "candidate_version", "baseline", "baseline_version", "reference",
        "created_by",
    )  # fmt: skip


class SequentialTestListView(generics.ListAPIView):
    """List sequential tests, newest first (``?status=``)."""

    serializer_class = SequentialTestSerializer
    filterset_fields = ["status", "game"]
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    def get_queryset(self):
        return _tests()

    def get_serializer(self, *args, **kwargs):
        if kwargs.get("many") and args:
            tests = list(args[0])
            finished = [t.pk for t in tests if t.status != SequentialTest.Status.RUNNING]
            context = kwargs.setdefault("context", self.get_serializer_context())
            context["matches"] = sequential.sequential_tests_matches(finished)
            args = (tests, *args[1:])
        return super().get_serializer(*args, **kwargs)

    @extend_schema(
        request=SequentialTestCreateSerializer,
        responses={
            201: SequentialTestSerializer,
            403: OpenApiResponse(description="Not your bot (owners test their own bots "
                                 "against their own or the built-in ones)."),
            429: OpenApiResponse(description="SEQUENTIAL_TESTS_PER_DAY reached."),
        },
        description=(
            "Start a sequential test of `candidate` against `baseline` on paired deals; "
            "it stops when the LLR crosses a bound or at `max_games`. Unrated."
        ),
    )  # fmt: skip
    def post(self, request: Request) -> Response:
        given = SequentialTestCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        test = sequential.sequential_test_create(user=request.user, **given.validated_data)
        test = _tests().get(pk=test.pk)
        return Response(SequentialTestSerializer(test).data, status=status.HTTP_201_CREATED)


class SequentialTestDetailView(generics.RetrieveAPIView):
    serializer_class = SequentialTestSerializer

    def get_queryset(self):
        return _tests()


class SequentialTestCancelView(generics.GenericAPIView):
    serializer_class = SequentialTestSerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self):
        return _tests()

    @extend_schema(request=None, responses=SequentialTestSerializer)
    def post(self, request: Request, pk: int) -> Response:
        """Cancel a running test (its creator or staff); a finished one is left as it is."""
        test = self.get_object()
        if test.created_by_id != request.user.pk and not request.user.is_staff:
            raise PermissionDenied("Only the test's creator or staff may cancel it.")
        sequential.sequential_test_cancel(test_id=test.pk)
        return Response(SequentialTestSerializer(_tests().get(pk=test.pk)).data)
