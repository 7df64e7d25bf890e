"""A cancellation that meets the end of a time-limited wait still cancels (Python 3.11's
asyncio.wait_for drops it, CPython gh-86296): the hall's director, whose standings
publication met its cancel that way, never stopped, and its test waited for ever."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import aiomqtt
import pytest

from cribboard.mqtt.address import BrokerAddress
from cribboard.waiting import within


async def cancelled_as_it_completes(wait: Callable[[Awaitable[Any]], Awaitable[Any]]) -> bool:
    """Whether a task waiting through `wait` ends cancelled when the thing it awaits completes
    and the task is cancelled in the same loop turn (as a publication's PUBACK and Ctrl-C can)."""
    done = asyncio.get_running_loop().create_future()
    waiter = asyncio.create_task(wait(done))
    await asyncio.sleep(0)  # the task is waiting now
    done.set_result("acknowledged")
    waiter.cancel()
    try:
        await waiter
    except asyncio.CancelledError:
        return True
    return False


async def test_within_keeps_a_cancel_that_meets_the_end_of_its_wait() -> None:
    assert await cancelled_as_it_completes(lambda fut: within(fut, 5.0))


async def test_within_still_times_out_and_returns_results() -> None:
    assert await within(asyncio.sleep(0, result=7), 5.0) == 7
    with pytest.raises(TimeoutError):
        await within(asyncio.Event().wait(), 0.01)


async def test_the_mqtt_clients_waits_keep_a_cancel() -> None:
    # Every MQTT client cribboard makes (hall, table, remote game) waits through within().
    assert "_wait_for" in vars(aiomqtt.Client), "aiomqtt renamed the wait cribboard overrides"
    client = BrokerAddress("127.0.0.1", 1883, False).client()
    assert await cancelled_as_it_completes(lambda fut: client._wait_for(fut, 5.0))
    assert await cancelled_as_it_completes(lambda fut: client._wait_for(fut, None))
    with pytest.raises(aiomqtt.MqttError, match="timed out"):
        await client._wait_for(asyncio.Event().wait(), 0.01)


async def test_aiomqtt_still_has_the_private_parts_cribboard_uses() -> None:
    """What pins aiomqtt below 3 (pyproject.toml): a release that renames one fails here, not
    in a hall at the club."""
    client = BrokerAddress("127.0.0.1", 1883, False).client()
    for name in ("_wait_for", "_on_connect"):
        assert name in vars(aiomqtt.Client), name
    assert callable(client._client.manual_ack_set) and callable(client._client.ack)
    assert client._queue.qsize() == 0
