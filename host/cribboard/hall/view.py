"""What the projector page shows, kept up to date from the hall's MQTT messages: every table's
board (its state, drawn as the board draws it, and whether it is online), the round (who plays
whom at which table) and the standings.

The director feeds its view from its own subscription; ``cribboard hall page`` feeds one from a
read-only viewer connection (:func:`follow`). Each change goes out to the page's WebSockets
through the page's feed (:class:`cribboard.hall.fanout.Fanout`): the latest of each table, drawn
and serialised once, when a socket sends it."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import aiomqtt

from cribboard.api import BoardState
from cribboard.errors import HallError
from cribboard.hall.fanout import Fanout
from cribboard.hallwire import messages, topics
from cribboard.linelimit import LineLimiter
from cribboard.mqtt.address import BrokerAddress, refusal
from cribcore.render import Renderer
from cribcore.state import NO_WINNER

log = logging.getLogger(__name__)

RECONNECT_S = 1.0


def frame_hex(state: BoardState, renderer: Renderer | None = None) -> str:
    """The board's LEDs for `state` as the firmware's renderer draws them (hole order, 6 hex
    digits a hole, the still frame: no blink or pulse), for the page's board drawing."""
    renderer = renderer or Renderer(None)
    board = SimpleNamespace(
        players=state.players,
        target=state.target,
        dealer=state.dealer,
        winner=NO_WINNER if state.winner is None else state.winner,
        front=state.front,
        back=state.back,
        pending=state.pending,
        games=state.games,
        match_len=state.match_length,
        match_kind=state.match_kind,
        match_game=state.match_game,
    )
    renderer.draw(board, 0)
    return bytes(renderer.frame).hex()


@dataclass
class TableView:
    """One table as the page shows it; None: not heard of yet. Its board's frame (`rgb`) is
    drawn when a page is sent it, not on every change."""

    number: int
    state: BoardState | None = None
    online: bool | None = None
    _rgb: str | None = None
    _renderer: Renderer | None = None

    @property
    def rgb(self) -> str | None:
        """The board's LEDs as the firmware draws them (None: no state yet)."""
        if self._rgb is None and self.state is not None:
            self._rgb = frame_hex(self.state, self._renderer)
        return self._rgb

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "table",
            "table": self.number,
            "state": None if self.state is None else self.state.to_json(),
            "online": self.online,
            "rgb": self.rgb,
        }


class HallView:
    """The hall as the page sees it. :meth:`feed` takes every message of the hall's topics."""

    def __init__(self, hall: str) -> None:
        self.hall = topics.check_hall(hall)
        self.tables: dict[int, TableView] = {}
        self.round: dict[str, Any] | None = None
        self.standings: dict[str, Any] | None = None
        self.fanout = Fanout()
        self._warnings = LineLimiter(lambda text: log.warning("%s", text))
        self.updates = 0  # messages taken, for tests and benchmarks
        self._renderer = Renderer(None)

    def table(self, number: int) -> TableView:
        view = self.tables.get(number)
        if view is None:
            view = self.tables[number] = TableView(number, _renderer=self._renderer)
        return view

    def feed(self, topic: str, payload: bytes, *, retained: bool = False) -> None:
        """Take one message (anything not for the page is ignored; a bad payload is logged;
        a retained `event`, which no table client publishes, is ignored). Never raises:
        whatever a message holds, or a fault in drawing it, stays with the page."""
        if retained and topic.endswith(f"/{topics.EVENT}"):
            self._warnings.say(topic, f"{topic}: retained: ignored")
            return
        try:
            self._feed(topic, payload)
        except Exception:
            if self._warnings.allow(topic):
                log.exception("the page could not show %s: ignored", topic)

    def _feed(self, topic: str, payload: bytes) -> None:
        try:
            name = topics.parse(topic)
            if name.table is None:
                obj = messages.decode_hall(payload, name.leaf)
                message = {"type": name.leaf, name.leaf: obj}
                if name.leaf == topics.ROUND:
                    self.round = obj
                else:
                    self.standings = obj
                self.fanout.publish(name.leaf, lambda: message)
            elif name.leaf in (topics.STATE, topics.EVENT):
                self.set_state(name.table, messages.decode_state(payload))
            elif name.leaf == topics.ONLINE:
                self.set_online(name.table, messages.decode_online(payload))
            else:
                return
        except HallError as err:
            self._warnings.say(topic, f"{topic}: {err}")  # a few a topic a minute
            return
        if name.table is None:
            self.updates += 1

    def set_state(self, table: int, state: BoardState) -> None:
        view = self.table(table)
        self.updates += 1
        if view.state == state:
            return  # the same state again (state and event carry the same bytes)
        view.state, view._rgb = state, None
        self.fanout.publish(f"table/{table}", view.to_json)

    def set_online(self, table: int, online: bool) -> None:
        view = self.table(table)
        self.updates += 1
        if view.online != online:
            view.online = online
            self.fanout.publish(f"table/{table}", view.to_json)

    def snapshot(self) -> list[dict[str, Any]]:
        """Everything, as the messages a page that just connected needs."""
        out: list[dict[str, Any]] = [{"type": "hall", "hall": self.hall}]
        if self.round is not None:
            out.append({"type": "round", "round": self.round})
        if self.standings is not None:
            out.append({"type": "standings", "standings": self.standings})
        for number in sorted(self.tables):
            try:
                out.append(self.tables[number].to_json())
            except Exception:  # a fault drawing one table stays with that table
                log.exception("the page could not show table %d: left out", number)
        return out


def view_filters(hall: str) -> Iterable[str]:
    """The topic filters that feed a view (and the director)."""
    for leaf in (topics.STATE, topics.EVENT, topics.ONLINE):
        yield topics.table_topic(hall, "+", leaf)
    for leaf in topics.HALL_LEAVES:
        yield topics.hall_topic(hall, leaf)


async def follow(view: HallView, address: BrokerAddress, connected: asyncio.Event) -> None:
    """Feed `view` from the broker as a viewer (read-only, a clean session: the retained
    messages give the hall as it is), reconnecting until cancelled. `connected` is set while
    the connection is up."""
    identifier = f"viewer-{secrets.token_hex(4)}"
    while True:
        try:
            async with address.client(identifier) as client:
                for topic in view_filters(view.hall):
                    await client.subscribe(topic, qos=1)
                connected.set()
                async for message in client.messages:
                    view.feed(
                        str(message.topic),
                        messages.payload_bytes(message.payload),
                        retained=bool(message.retain),
                    )
        except aiomqtt.MqttError as err:
            refused = refusal(err, address)
            if refused is not None:
                raise HallError(f"page: {refused}") from None
            log.warning("the page lost the broker (%s): reconnecting", err)
        finally:
            connected.clear()
        await asyncio.sleep(RECONNECT_S)
