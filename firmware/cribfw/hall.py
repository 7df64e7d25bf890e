# A Wi-Fi board's own table client for the club hall (docs/mqtt.md, "A Wi-Fi board"): a task of
# the App when the board has a hall configuration (cribfw/hallconfig.py). Over MQTT with
# micropython-lib's umqtt.simple (firmware/umqtt/), as a table must: client id and user table-N,
# a persistent session, the Last Will online=0; on every connection: subscribe to cmd, online=1,
# then the board's state to `state` (retained) and `event`; after that the state after each change,
# and each command run once and answered on `ack`.
#
# It shares the asyncio loop with the LEDs and buttons, and umqtt.simple's calls block, so:
#   - one network operation per turn (a publish, a ping, a subscribe, or reading one packet),
#     then TURN_MS for the other tasks;
#   - every socket call is bounded: the connection attempt by CONNECT_TIMEOUT_S, every read and
#     write after it by IO_TIMEOUT_S (cribfw/boundedsock.py); a broker that refuses costs
#     nothing, one that accepts and never answers costs one CONNECT_TIMEOUT_S per attempt;
#   - attempts are spread out: RETRY_FIRST_MS after a loss, doubling to RETRY_MAX_MS, a little
#     later for each table so a hall's boards do not all come back at once;
#   - a connection that says nothing for SILENT_MS (pings every PING_MS) is taken as lost.
# Payloads come from cribfw/hallpayload.py; the last command run is kept on the flash by
# cribfw/hallmemory.py. Every change is kept (the dispatcher tells the client after each request
# and each push, ctx.on_change) in a ring of RING preallocated states and published in order to
# `event`, the newest also to `state`: the director judges a game by every revision (a gap is
# doubtful), also those made while the broker was away, up to RING of them. A command or a read
# larger than a table ever takes (MAX_READ) ends the connection before it is allocated.

try:
    from micropython import const
except ImportError:  # CPython

    def const(value):  # type: ignore[no-redef]
        return value


from cribcore import hall
from cribcore.protocol import LineWriter
from cribcore.state import GameError
from cribfw.boundedsock import BoundedSocket
from cribfw.clock import ticks_add, ticks_diff, ticks_ms
from cribfw.hallpayload import STATE_BYTES, CommandError, read_command, write_ack, write_state

TURN_MS = const(20)
CONNECT_TIMEOUT_S = 0.3  # TCP connect and the broker's CONNACK (a LAN answers in a few ms)
IO_TIMEOUT_S = 0.5  # the rest of a packet, a PUBACK or SUBACK
KEEPALIVE_S = const(30)  # docs/mqtt.md: 30 s or less
PING_MS = const(10000)
SILENT_MS = const(25000)
RETRY_FIRST_MS = const(500)
RETRY_MAX_MS = const(8000)
_ACK_BYTES = const(160)
_INBOX = const(4)  # commands received and not run yet (the director sends one at a time)
RING = const(8)  # changes kept to publish (1.6 KB); beyond, the oldest go
MAX_READ = const(512)  # the most of one packet read at once: a topic, a command (256 bytes)

# Where the connection is.
OFFLINE = const(0)
SUBSCRIBING = const(1)  # connected: subscribe to cmd next
ANNOUNCING = const(2)  # subscribed: online=1 next
ONLINE = const(3)  # announced: the state, then every change and command


class HallClient:
    """The table client of the board whose Context is `ctx`, for the hall in `config`
    (cribfw.hallconfig.HallConfig); `memory` a cribfw.hallmemory.CommandMemory; `wifi` a
    cribfw.wifi.Wifi, or None on a board that is on the network already (the virtual board).
    Raises ImportError on a board without sockets."""

    def __init__(self, ctx, config, memory, wifi=None):
        from umqtt.simple import MQTTClient

        self.ctx = ctx
        self.memory = memory
        self.wifi = wifi
        prefix = hall.table_prefix(config.hall, config.table).encode()
        self.t_state = prefix + hall.STATE.encode()
        self.t_event = prefix + hall.EVENT.encode()
        self.t_online = prefix + hall.ONLINE.encode()
        self.t_cmd = prefix + hall.CMD.encode()
        self.t_ack = prefix + hall.ACK.encode()
        client_id = (hall.TABLE_USER % config.table).encode()
        self.tls = None  # plain MQTT, or the TLS that verifies the broker (cribfw/halltls.py)
        if config.ca is not None:
            from cribfw.halltls import TlsWrapper

            self.tls = TlsWrapper(config.ca)
        self.refused = None  # why the broker's certificate was last refused (None: it was not)
        self.client = MQTTClient(
            client_id,
            config.host,
            port=config.port,
            user=config.user.encode(),
            password=config.password.encode(),
            keepalive=KEEPALIVE_S,
            ssl=self.tls,
        )
        self.client.set_callback(self._received)
        self.client.set_last_will(
            self.t_online, hall.OFFLINE_PAYLOAD, retain=hall.ONLINE_DELIVERY[1], qos=1
        )
        self.names = []  # the players the last new game named (the board shows none)
        self.phase = OFFLINE
        # The changes kept, oldest at `_head`: their states, written once each.
        self.ring = [LineWriter(STATE_BYTES) for _ in range(RING)]
        self._ring_views = [memoryview(w.buf) for w in self.ring]
        self._ring_revs = [0] * RING
        self._head = 0
        self._count = 0
        self.kept_rev = -1  # the revision last kept
        self.state_sent = False  # the newest kept state went to `state` (its event next)
        self.dropped = 0  # changes dropped from a full ring (the director sees a gap there)
        self.ack = LineWriter(_ACK_BYTES)
        self._ack_view = memoryview(self.ack.buf)
        self.ack_due = False  # an ack waits, to go once the state of ack_rev is out
        self.ack_rev = 0
        self.published_rev = -1  # the revision last published to `event` (-1: none yet)
        self.inbox = []  # cmd payloads received, not run yet
        self._pinged_ms = 0
        self._sock = None  # the BoundedSocket of the connection
        self._retry_ms = RETRY_FIRST_MS
        self._next_try_ms = ticks_ms()
        self._spread_ms = config.table * 97 % 1000  # each table's own delay after a loss
        # Figures (bench/hall_firmware_bench.py, the tests).
        self.connects = 0  # connections made
        self.published = 0  # messages published
        ctx.on_change = self.changed  # every change, as the dispatcher makes it
        self.changed(ctx.game)

    # --- the task ---------------------------------------------------------------------------

    async def run(self, app):
        """The table client's task (for App.tasks)."""
        import asyncio

        while True:
            self.step(ticks_ms())
            await asyncio.sleep_ms(TURN_MS)

    def step(self, now):
        """One turn: at most one network operation, each bounded in time."""
        if self.phase == OFFLINE:
            self._connect(now)
            return
        try:
            if self.wifi is not None and not self.wifi.up(now):
                raise OSError(-1)  # the network went away
            self._next(now)
            if self.phase == ONLINE and not self.inbox:
                self.client.check_msg()  # one packet at most: a command, a PINGRESP
            if ticks_diff(now, self._heard_ms()) >= SILENT_MS:
                raise OSError(-1)  # pings unanswered: the broker or the network is gone
        except Exception:  # OSError, and umqtt's asserts and indexing on a short answer
            self._lost(now)

    def _connect(self, now):
        if ticks_diff(now, self._next_try_ms) < 0:
            return
        if self.wifi is not None and not self.wifi.up(now):
            return
        client = self.client
        tls = self.tls
        try:
            client.connect(clean_session=False, timeout=CONNECT_TIMEOUT_S)
            raw = tls.raw if tls is not None else None
            self._sock = client.sock = BoundedSocket(client.sock, IO_TIMEOUT_S, raw, MAX_READ)
        except Exception as err:
            if tls is not None and isinstance(err, ValueError):
                self.refused = str(err)  # mbedTLS says why: signer, name, dates
            self._lost(now)
            return
        self.connects += 1
        self._retry_ms = RETRY_FIRST_MS
        self._pinged_ms = now
        self.phase = SUBSCRIBING

    def _heard_ms(self):
        sock = self._sock
        return sock.heard_ms if sock is not None else ticks_ms()

    def _lost(self, now):
        client = self.client
        if client.sock is not None:
            try:
                client.sock.close()  # no DISCONNECT: the broker publishes the Last Will
            except Exception:
                pass
            client.sock = None
        self._sock = None
        self.phase = OFFLINE
        self.state_sent = False  # the newest state goes to `state` again on the next connection
        self._next_try_ms = ticks_add(now, self._retry_ms + self._spread_ms)
        self._retry_ms = min(2 * self._retry_ms, RETRY_MAX_MS)

    def changed(self, game):
        """Keep the state of a change, to publish in order (the oldest kept goes when the ring
        is full). Called with every change (ctx.on_change) and each turn: allocates nothing."""
        rev = game.rev
        if rev == self.kept_rev:
            return
        self.kept_rev = rev
        count = self._count
        if count == RING:
            self._head = (self._head + 1) % RING
            count -= 1
            self.dropped += 1
        slot = (self._head + count) % RING
        write_state(self.ring[slot], game)
        self._ring_revs[slot] = rev
        self._count = count + 1
        self.state_sent = False

    def unsent(self):
        """How many changes are kept and not published yet (the bench, the tests)."""
        return self._count

    def _next(self, now):
        client = self.client
        self.changed(self.ctx.game)  # (a change the dispatcher did not tell of)
        if self.phase == SUBSCRIBING:
            client.subscribe(self.t_cmd, qos=hall.CMD_DELIVERY[0])
            self.phase = ANNOUNCING
        elif self.phase == ANNOUNCING:
            self._publish(self.t_online, hall.ONLINE_PAYLOAD, hall.ONLINE_DELIVERY)
            self.phase = ONLINE
            if not self._count:  # the state now, whatever was published before
                self.kept_rev = -1
                self.changed(self.ctx.game)
        elif self._count > 1 or (self._count and self.state_sent):
            # The oldest change kept: to `event` (the newest went to `state` first).
            head = self._head
            view = self._ring_views[head][: self.ring[head].n]
            self._publish(self.t_event, view, hall.EVENT_DELIVERY)
            self.published_rev = self._ring_revs[head]
            self._head = (head + 1) % RING
            self._count -= 1
        elif self._count:
            head = self._head
            self._publish(
                self.t_state, self._ring_views[head][: self.ring[head].n], hall.STATE_DELIVERY
            )
            self.state_sent = True
        elif self.ack_due and self.published_rev >= self.ack_rev and self.published_rev >= 0:
            self._publish(self.t_ack, self._ack_view[: self.ack.n], hall.ACK_DELIVERY)
            self.ack_due = False
        elif self.inbox and not self.ack_due:
            self._command(self.inbox.pop(0))
        elif ticks_diff(now, self._pinged_ms) >= PING_MS:
            client.ping()
            self._pinged_ms = now

    def _publish(self, topic, payload, delivery):
        self.client.publish(topic, payload, retain=delivery[1], qos=delivery[0])
        self.published += 1

    # --- commands ---------------------------------------------------------------------------

    def _received(self, topic, payload):
        # Called from inside umqtt's calls (even while a QoS 1 publish waits for its answer):
        # only keep the command; the task runs it and publishes the ack (docs/mqtt.md).
        if topic == self.t_cmd and len(self.inbox) < _INBOX:
            self.inbox.append(payload)

    def _command(self, payload):
        """Run one command and make its ack (sent once the state it made is out)."""
        game = self.ctx.game
        try:
            command_id, target, names = read_command(payload)
        except CommandError as err:
            if err.command_id is None:
                return  # nothing to answer: ignored
            write_ack(self.ack, err.command_id.encode(), b"bad_command", err.text.encode())
            self._ack_after(game.rev)
            return
        command_id = command_id.encode()
        memory = self.memory
        if memory.ran(command_id):
            # Delivered again (QoS 1, or the director's resend after it or this board
            # restarted): answered again, never run twice.
            self.ack.reset()
            self.ack.text(memory.last_ack)
            self._ack_after(game.rev)
            return
        try:
            game.new_game(target, len(names))
        except GameError as err:
            write_ack(self.ack, command_id, err.code.encode(), err.text.encode())
        else:
            self.names = names
            write_ack(self.ack, command_id)
            store = self.ctx.store
            if store is not None:
                # The new game on the flash before the id is: after a power cut the board
                # never says it ran a command whose game it does not show.
                try:
                    store.save(game, self.ctx.renderer)
                except (OSError, MemoryError):
                    pass  # the store's own task tries again
        memory.remember(command_id, bytes(self._ack_view[: self.ack.n]))
        self._ack_after(game.rev)

    def _ack_after(self, rev):
        self.ack_due = True
        self.ack_rev = rev
