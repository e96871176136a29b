from django.apps import AppConfig


class BotsConfig(AppConfig):
    name = "bots"
    verbose_name = "Bots"

    def ready(self) -> None:
        from bots.selectors import bot_by_name_or_id
        from bots.tasks import match_changed_handle
        from games.events import match_changed_subscribe
        from games.seating import bot_lookup_register

        # A seat spec names a bot; games finds it through this lookup, not by importing bots.
        bot_lookup_register(bot_by_name_or_id)
        # After a committed change that gives the turn to a seat the arena drives, the
        # driver plays it (bots.tasks.match_turn_started).
        match_changed_subscribe(match_changed_handle)
