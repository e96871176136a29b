from django.apps import AppConfig


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = "Games"

    def ready(self) -> None:
        from games.live import live_publish_connect

        # Every committed change of a match wakes its waiters in every web process.
        live_publish_connect()
