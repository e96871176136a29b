from django.apps import AppConfig


class BotsConfig(AppConfig):
    name = "bots"
    verbose_name = "Bots"

    def ready(self) -> None:
        from bots.selectors import bot_by_name_or_id
        from games.seating import bot_lookup_register

        # A seat spec names a bot; games finds it through this lookup, not by importing bots.
        bot_lookup_register(bot_by_name_or_id)
