from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        from cardserver.health import health_report_register
        from games.events import match_changed_subscribe
        from games.live import live_publish_connect
        from games.sealing import settle_on_end
        from games.selectors import matches_stall_report
        from games.view_helpers import match_errors_answer

        # Every committed change of a match wakes its waiters in every web process.
        live_publish_connect()
        # The health check reports the matches in play that stopped moving.
        health_report_register("matches", matches_stall_report)
        # A match that ends may be the last its deal group was waiting for.
        match_changed_subscribe(settle_on_end)
        # The API's one exception handler answers the match errors of every view.
        match_errors_answer()
