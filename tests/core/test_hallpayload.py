# A Wi-Fi board's hall payloads (cribfw/hallpayload.py) and its memory of the last command
# (cribfw/hallmemory.py), under CPython (pytest) and MicroPython (mprun.py). The literal payloads
# below are the host's: tests/hall/test_hall_firmware_payloads.py checks that
# cribboard.hallwire.messages encodes each vector's state and ack to exactly these bytes.
from test_store import with_root

from cribcore.protocol import LineWriter
from cribcore.state import GameState
from cribfw.hallmemory import CommandMemory
from cribfw.hallpayload import STATE_BYTES, CommandError, read_command, write_ack, write_state


def fresh():
    return GameState()


def pegged():
    game = GameState()
    game.peg(0, 12)
    game.peg(1, 7)
    game.set_pending(0, 4)
    return game


def skunked():
    game = GameState()
    game.set_pegs(0, 86, 80)
    game.set_pegs(1, 112, 104)
    game.peg(1, 9)
    game.next_dealer()
    return game


def three_players_61():
    game = GameState(3, 61, True)
    game.peg(2, 29)
    game.peg(0, 29)
    game.peg(2, 29)
    game.peg(1, 3)
    game.set_pending(1, 17)
    game.peg(2, 3)
    return game


def won_61_games_doubled():
    game = GameState(2, 61)
    game.set_skunk_double(1)
    game.peg(0, 29)
    game.peg(0, 29)
    game.peg(0, 3)
    return game


STATE_VECTORS = (
    (
        fresh,
        b'{"rev":0,"target":121,"players":2,"dealer":0,"winner":null,"result":"playing",'
        b'"front":[0,0],"back":[0,0],"games":[0,0],"pending":[0,0],"undo":0,'
        b'"skunk_double":false}',
    ),
    (
        pegged,
        b'{"rev":3,"target":121,"players":2,"dealer":0,"winner":null,"result":"playing",'
        b'"front":[12,7],"back":[0,0],"games":[0,0],"pending":[4,0],"undo":2,'
        b'"skunk_double":false}',
    ),
    (
        skunked,
        b'{"rev":4,"target":121,"players":2,"dealer":1,"winner":1,"result":"skunk",'
        b'"front":[86,121],"back":[80,112],"games":[0,1],"pending":[0,0],"undo":4,'
        b'"skunk_double":false}',
    ),
    (
        three_players_61,
        b'{"rev":6,"target":61,"players":3,"dealer":0,"winner":2,"result":"skunk",'
        b'"front":[29,3,61],"back":[0,0,58],"games":[0,0,2],"pending":[0,17,0],"undo":5,'
        b'"skunk_double":true}',
    ),
    (
        won_61_games_doubled,
        b'{"rev":4,"target":61,"players":2,"dealer":0,"winner":0,"result":"skunk",'
        b'"front":[61,0],"back":[58,0],"games":[2,0],"pending":[0,0],"undo":3,'
        b'"skunk_double":true}',
    ),
)

# (id, error code or None, message or None) -> the ack's bytes.
ACK_VECTORS = (
    ((b"r2t3", None, None), b'{"id":"r2t3","ok":true}'),
    (
        (b"r2t3.2", b"busy", b"a count is being entered"),
        b'{"id":"r2t3.2","ok":false,"error":"busy","message":"a count is being entered"}',
    ),
    ((b"x_y-Z.9", b"bad_command", None), b'{"id":"x_y-Z.9","ok":false,"error":"bad_command"}'),
    (
        (b"q", b"bad_command", b'cmd: unknown op "go" \\ \t\x01'),
        b'{"id":"q","ok":false,"error":"bad_command","message":"cmd: unknown op \\"go\\" \\\\ '
        b'\\t\\u0001"}',
    ),
)

# A cmd payload -> (id, target, names) it runs, or ("error", the id to answer or None).
COMMAND_VECTORS = (
    (
        b'{"id":"r2t3","op":"new","target":121,"names":["Ann","Bob"]}',
        ("r2t3", 121, ["Ann", "Bob"]),
    ),
    (
        b'{"id":"a","op":"new","target":61,"names":["A","B","C"],"more":1}',
        ("a", 61, ["A", "B", "C"]),
    ),
    (b'{"id":"r1t1","op":"old","target":121,"names":["A","B"]}', ("error", "r1t1")),
    (b'{"id":"r1t1","op":"new","target":100,"names":["A","B"]}', ("error", "r1t1")),
    (b'{"id":"r1t1","op":"new","target":true,"names":["A","B"]}', ("error", "r1t1")),
    (b'{"id":"r1t1","op":"new","target":"121","names":["A","B"]}', ("error", "r1t1")),
    (b'{"id":"r1t1","op":"new","target":121,"names":["A"]}', ("error", "r1t1")),
    (b'{"id":"r1t1","op":"new","target":121,"names":["A",2]}', ("error", "r1t1")),
    (b'{"id":"r1t1","op":"new","target":121,"names":"AB"}', ("error", "r1t1")),
    (b'{"id":"r1t1","op":"new","target":121}', ("error", "r1t1")),
    (b'{"id":"bad id","op":"new","target":121,"names":["A","B"]}', ("error", None)),
    (b'{"id":"12345678901234567","op":"new","target":121,"names":["A","B"]}', ("error", None)),
    (b'{"id":"","op":"new","target":121,"names":["A","B"]}', ("error", None)),
    (b'{"id":7,"op":"new","target":121,"names":["A","B"]}', ("error", None)),
    (b'{"op":"new","target":121,"names":["A","B"]}', ("error", None)),
    (b'["r1t1"]', ("error", None)),
    (b"not json", ("error", None)),
    (b"", ("error", None)),
    # docs/mqtt.md's limits, on the board too: a name is cut to 24 characters; a command longer
    # than 256 bytes is not read at all (its id is not trusted: nothing answers it).
    (
        b'{"id":"r1t1","op":"new","target":121,"names":["' + b"A" * 30 + b'","Bob"]}',
        ("r1t1", 121, ["A" * 24, "Bob"]),
    ),
    (
        b'{"id":"r1t1","op":"new","target":121,"names":["A","B"],"x":"' + b"x" * 200 + b'"}',
        ("error", None),
    ),
)


def command_outcome(payload):
    try:
        return read_command(payload)
    except CommandError as err:
        return ("error", err.command_id)


def test_state_payloads_are_the_hosts():
    out = LineWriter(STATE_BYTES)
    for make, expected in STATE_VECTORS:
        write_state(out, make())
        assert bytes(out.buf[: out.n]) == expected, (make, bytes(out.buf[: out.n]))
        assert not out.overflow


def test_the_longest_state_fits_the_buffer():
    game = GameState(3, 121, True)
    for p in range(3):
        game.set_pegs(p, 120, 119)
        game.set_pending(p, 29)
    game.games[0] = game.games[1] = game.games[2] = 999
    game.undo_count = 64  # UNDO_DEPTH
    game.rev = 9999999
    out = LineWriter(STATE_BYTES)
    write_state(out, game)
    assert not out.overflow and out.n <= STATE_BYTES


def test_ack_payloads_are_the_hosts():
    out = LineWriter(160)
    for (command_id, code, message), expected in ACK_VECTORS:
        write_ack(out, command_id, code, message)
        assert bytes(out.buf[: out.n]) == expected, bytes(out.buf[: out.n])


def test_commands_are_read_as_the_host_reads_them():
    for payload, expected in COMMAND_VECTORS:
        outcome = command_outcome(payload)
        assert outcome == expected or list(outcome) == list(expected), (payload, outcome)


def test_the_last_command_survives_a_restart():
    def run(root):
        path = root + "/hall-last.dat"
        memory = CommandMemory(path)
        assert not memory.ran(b"r1t1") and not memory.ran(b"")
        memory.remember(b"r1t1", b'{"id":"r1t1","ok":true}')
        again = CommandMemory(path)
        assert again.ran(b"r1t1") and not again.ran(b"r1t2")
        assert again.last_ack == b'{"id":"r1t1","ok":true}'
        again.remember(b"r2t1", b'{"id":"r2t1","ok":false,"error":"game_over"}')
        third = CommandMemory(path)
        assert third.ran(b"r2t1") and not third.ran(b"r1t1")
        assert third.last_ack == b'{"id":"r2t1","ok":false,"error":"game_over"}'
        assert memory.errors == 0 and again.errors == 0

    with_root(run)


def test_a_damaged_memory_is_no_memory():
    def run(root):
        path = root + "/hall-last.dat"
        CommandMemory(path).remember(b"r1t1", b'{"id":"r1t1","ok":true}')
        with open(path, "rb") as f:
            good = f.read()
        for cut in (0, 5, 11, len(good) - 1):
            with open(path, "wb") as f:
                f.write(good[:cut])
            assert not CommandMemory(path).ran(b"r1t1"), cut
        flipped = bytearray(good)
        flipped[8] ^= 1
        with open(path, "wb") as f:
            f.write(flipped)
        assert not CommandMemory(path).ran(b"r1t1")

    with_root(run)


def test_a_memory_that_cannot_be_written_is_counted_and_kept_until_restart():
    memory = CommandMemory("/no/such/folder/hall-last.dat")
    memory.remember(b"r1t1", b'{"id":"r1t1","ok":true}')
    assert memory.errors == 1 and memory.ran(b"r1t1")
