"""Telling a bot's owner that the arena paused their bot (unhealthy, or off the ladder).

``bot_pause_notify`` is called inside the transaction that pauses the bot; the mail is
sent by a Celery task queued after that commit, so that a slow mail server never holds
the worker that recorded the failure (the bot-calls pool records answers on a few
threads) and a rolled-back pause sends nothing. Mail goes through Django's mail framework
(``EMAIL_BACKEND``: the console by default, SMTP when ``EMAIL_HOST`` is set).
"""

from __future__ import annotations

import logging
from urllib.parse import quote

from celery import shared_task
from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction

from bots.models import Bot

logger = logging.getLogger(__name__)


def bot_pause_notify(*, bot_id: int, reason: str) -> None:
    """After the current transaction commits, mail the bot's owner why it was paused."""

    def send() -> None:
        try:
            bot_pause_mail.delay(bot_id, reason)
        except Exception:
            # The pause is committed and shown on the bot's page; a lost mail must not
            # undo or fail the work that paused it.
            logger.exception("Could not queue the pause mail of bot %s", bot_id)

    transaction.on_commit(send)


# Named as the task of bots.tasks it has always been (the routes and the workers know it by
# that name); defined here, beside the notice that queues it, and re-exported there, so
# that this module, which the services use, never imports the tasks built on them.
@shared_task(
    name="bots.tasks.bot_pause_mail", ignore_result=True, soft_time_limit=30, time_limit=40
)
def bot_pause_mail(bot_id: int, reason: str) -> None:
    """Mail the owner of a bot the arena paused (queued after the pause's commit)."""
    bot_pause_mail_send(bot_id=bot_id, reason=reason)


def bot_pause_mail_send(*, bot_id: int, reason: str) -> bool:
    """Mail the bot's owner that the arena paused the bot and why; return whether a mail
    was sent (not when the owner has no address)."""
    bot = Bot.objects.select_related("owner").filter(pk=bot_id).first()
    if bot is None or not bot.owner.email:
        return False
    send_mail(
        subject=f"Card Arena paused your bot {bot.name}",
        message=(
            f"Hello {bot.owner.username},\n\n"
            f"The arena paused your bot {bot.name}: {reason}.\n"
            "It is offered no new matches until it answers well again (a good ping or move "
            "makes it healthy; a ladder pause is lifted by the arena's staff).\n\n"
            f"Its page says why and since when: {_bot_page(bot)}\n"
        ),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[bot.owner.email],
    )
    return True


def _bot_page(bot: Bot) -> str:
    # bots sits below web, so the page's path is spelled here rather than reversed.
    return f"{settings.SITE_URL}/me/bots/{quote(bot.name)}/"
