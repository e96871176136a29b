from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = "Tournaments"

    def ready(self) -> None:
        from games.events import match_changed_subscribe
        from tournaments.tasks import match_ended_handle

        # A match that HTTP bots finish on the I/O pool is recorded when it ends.
        match_changed_subscribe(match_ended_handle)
