from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = "Tournaments"

    def ready(self) -> None:
        from games.events import match_changed_subscribe
        from tournaments import dispatch, tasks
        from tournaments.sequential_api import sequential_test_errors_answer
        from tournaments.views import tournament_errors_answer

        # A match that HTTP bots finish on the I/O pool is recorded when it ends.
        match_changed_subscribe(tasks.match_ended_handle)
        # The tasks wrap the modules that send them (tasks -> services, ladder, sequential
        # -> dispatch): those send through dispatch.TASKS, handed down here.
        dispatch.tasks_connect(
            play_tournament_match=tasks.play_tournament_match,
            fit_pool_ratings=tasks.fit_pool_ratings,
            play_ladder_match=tasks.play_ladder_match,
            play_sequential_pair=tasks.play_sequential_pair,
        )
        # The API's one exception handler answers the tournaments' errors of every view.
        tournament_errors_answer()
        sequential_test_errors_answer()
