from django.apps import AppConfig


class BotsConfig(AppConfig):
    name = "bots"
    verbose_name = "Bots"

    def ready(self) -> None:
        from bots import calls, driver, pool
        from bots.challenge_api import challenge_errors_answer
        from bots.challenge_selectors import NOTICE, challenge_notices
        from bots.selectors import bot_by_name_or_id
        from bots.tasks import match_changed_handle, play_bot_turns
        from games.account_notices import account_notice_reader_register
        from games.events import match_changed_subscribe
        from games.seating import bot_lookup_register

        # Each module of the turn's path imports only those below it (tasks -> pool ->
        # calls -> driver); what a lower one needs from above is handed down here: the
        # driver plays HTTP turns through calls, calls send to the pool, and the pool hands
        # a match whose built-in bot is to move to a CPU worker.
        driver.http_turns_connect(calls.http_turn_play)
        calls.pool_connect(pool.call_send)
        pool.builtin_turns_connect(play_bot_turns)

        # A seat spec names a bot; games finds it through this lookup, not by importing bots.
        bot_lookup_register(bot_by_name_or_id)
        # After a committed change that gives the turn to a seat the arena drives, the
        # driver plays it (bots.tasks.match_turn_started).
        match_changed_subscribe(match_changed_handle)
        # Challenges reach the account streams of those they concern (bots.challenges).
        account_notice_reader_register(NOTICE, challenge_notices)
        # The API's one exception handler answers the challenge errors of every view.
        challenge_errors_answer()
