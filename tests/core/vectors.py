# Literal protocol vectors, as plain data (imported by the core tests on CPython and on
# MicroPython; docs/protocol.md quotes them).
#
# VECTORS: one session, run step by step against a fresh board (GameState(): the 121 game, two
# players; profile "sim"; the firmware version from cribfw/version.py) on one link. A step is
# (bytes the host sends, [the lines the board writes back, in order]): exactly one reply per
# request, then the events that the request caused. The bytes were produced by the firmware's
# dispatcher running on MicroPython, not written by hand.
#
# TWO_LINKS: two links (say USB and BLE) on one fresh board; see there.
# ADMISSION: a Bluetooth central not admitted, beside USB; see there.
# RULES: the document's rules beyond VECTORS' session (the tally after corrections, pending
# counts, dealers, requests read together, ...), another session from a fresh board.
# MATCH: match play and the board's history, another session from a fresh board.
# ENCODE_VECTORS: (encode_request's positional arguments, the bytes it makes).
# ENCODE_REJECTS: encode_request's positional arguments it refuses with ValueError.
# DECODE_VECTORS: (line, (kind, request_id, name, fields, code, text), decode_state(fields)).
# DECODE_REJECTS: lines that protocol.decode_line refuses with ValueError.

from cribfw.version import FIRMWARE_VERSION

FW = FIRMWARE_VERSION.encode()
HELLO_FIELDS = (
    b"proto=1.4 fw=" + FW + b" board=sim layout=crib121 holes=121 max=64"
    b" caps=hello,ping,st,peg,set,undo,new,deal,pend,games,bright,budget,frame,test,"
    b"admit,brief,health,every,match,hist"
)
# What the board pushes on every link when the app starts (Dispatcher.announce()).
HELLO_EVENT = b"! hello " + HELLO_FIELDS + b"\n"
# The frame of a fresh board: 120 dark track holes, the win hole dim blue; brightness 128
# (scale 129 of 256) and the idle current of 121 LEDs.
FRESH_FRAME = b"scale=129 ma=121 rgb=" + b"000000" * 120 + b"00040b"
FRESH_FRAME_RGB = bytes(360) + b"\x00\x04\x0b"

VECTORS = [
    # hello first: versions, board, layout, capabilities
    (
        b"#1 hello\n",
        [
            b"#1 ok " + HELLO_FIELDS + b"\n",
        ],
    ),
    (
        b"hello\n",
        [
            b"ok " + HELLO_FIELDS + b"\n",
        ],
    ),
    # heartbeat
    (b"#2 ping\n", [b"#2 ok\n"]),
    (b"ping\n", [b"ok\n"]),
    # the whole state
    (
        b"#3 st\n",
        [
            b"#3 ok r=0 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=0 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # nothing to undo on a fresh board
    (b"#u0 undo\n", [b"#u0 err nothing_to_undo nothing to undo\n"]),
    # the current frame (fresh board: only the win hole glows)
    (
        b"#4 frame\n",
        [
            b"#4 ok " + FRESH_FRAME + b"\n",
        ],
    ),
    # the wiring self-test: the LEDs walk the chain, the game is untouched (no event)
    (b"#5 test\n", [b"#5 ok\n"]),
    (b"test 1\n", [b"err bad_arg wrong number of arguments\n"]),
    # score: reply with the new rev, then the state event
    (
        b"#7 peg 0 12\n",
        [
            b"#7 ok r=1\n",
            b"! st r=1 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # a resend (same id, same link) gets the remembered reply and is not applied again: no event
    (b"#7 peg 0 12\n", [b"#7 ok r=1\n"]),
    # an id names one request: a different request under a remembered id is not applied either
    (b"#7 peg 1 3\n", [b"#7 ok r=1\n"]),
    # only state-changing requests are remembered: st under the same id runs
    (
        b"#7 st\n",
        [
            b"#7 ok r=1 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # \r\n is tolerated; no id: the reply has none
    (
        b"peg 1 5\r\n",
        [
            b"ok r=2\n",
            b"! st r=2 t=121 n=2 d=0 w=-1 x=0 f=12,5 b=0,0 g=0,0 q=0,0 u=2 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#a1b2 peg 0 8\n",
        [
            b"#a1b2 ok r=3\n",
            b"! st r=3 t=121 n=2 d=0 w=-1 x=0 f=20,5 b=12,0 g=0,0 q=0,0 u=3 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#12345678 peg 1 4\n",
        [
            b"#12345678 ok r=4\n",
            b"! st r=4 t=121 n=2 d=0 w=-1 x=0 f=20,9 b=12,5 g=0,0 q=0,0 u=4 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"st\n",
        [
            b"ok r=4 t=121 n=2 d=0 w=-1 x=0 f=20,9 b=12,5 g=0,0 q=0,0 u=4 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # set pegs directly: player front [back]
    (
        b"#8 set 0 30 20\n",
        [
            b"#8 ok r=5\n",
            b"! st r=5 t=121 n=2 d=0 w=-1 x=0 f=30,9 b=20,5 g=0,0 q=0,0 u=5 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"set 1 7\n",
        [
            b"ok r=6\n",
            b"! st r=6 t=121 n=2 d=0 w=-1 x=0 f=30,7 b=20,5 g=0,0 q=0,0 u=6 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # undo the last change
    (
        b"undo\n",
        [
            b"ok r=7\n",
            b"! st r=7 t=121 n=2 d=0 w=-1 x=0 f=30,9 b=20,5 g=0,0 q=0,0 u=5 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # deal: pass the deal on, or name the dealer; no change: reply but no event
    (
        b"deal\n",
        [
            b"ok d=1\n",
            b"! st r=8 t=121 n=2 d=1 w=-1 x=0 f=30,9 b=20,5 g=0,0 q=0,0 u=6 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#9 deal 0\n",
        [
            b"#9 ok d=0\n",
            b"! st r=9 t=121 n=2 d=0 w=-1 x=0 f=30,9 b=20,5 g=0,0 q=0,0 u=7 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (b"deal 0\n", [b"ok d=0\n"]),
    # pending count preview (0 clears); not undoable
    (
        b"pend 1 6\n",
        [
            b"ok r=10\n",
            b"! st r=10 t=121 n=2 d=0 w=-1 x=0 f=30,9 b=20,5 g=0,0 q=0,6 u=7 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"pend 1 0\n",
        [
            b"ok r=11\n",
            b"! st r=11 t=121 n=2 d=0 w=-1 x=0 f=30,9 b=20,5 g=0,0 q=0,0 u=7 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # games won; x2: a skunk counts two games (for games finished from now on)
    (b"games\n", [b"ok g=0,0 x2=0\n"]),
    (
        b"games x2 1\n",
        [
            b"ok g=0,0 x2=1\n",
            b"! st r=12 t=121 n=2 d=0 w=-1 x=0 f=30,9 b=20,5 g=0,0 q=0,0 u=7 x2=1 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"games x2 0\n",
        [
            b"ok g=0,0 x2=0\n",
            b"! st r=13 t=121 n=2 d=0 w=-1 x=0 f=30,9 b=20,5 g=0,0 q=0,0 u=7 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (b"games clear\n", [b"ok g=0,0 x2=0\n"]),
    # brightness and current budget: the reply carries both; a change is pushed as ! cfg
    (b"bright\n", [b"ok bright=128 budget=400\n"]),
    (
        b"#b1 bright 100\n",
        [
            b"#b1 ok bright=100 budget=400\n",
            b"! cfg bright=100 budget=400\n",
        ],
    ),
    (b"budget\n", [b"ok bright=100 budget=400\n"]),
    (
        b"budget 500\n",
        [
            b"ok bright=100 budget=500\n",
            b"! cfg bright=100 budget=500\n",
        ],
    ),
    # new game: [target [players]]; 0 or absent keeps; undoable
    (
        b"#n1 new 61\n",
        [
            b"#n1 ok r=14\n",
            b"! st r=14 t=61 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=8 x2=0 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"new 121 3\n",
        [
            b"ok r=15\n",
            b"! st r=15 t=121 n=3 d=0 w=-1 x=0 f=0,0,0 b=0,0,0 g=0,0,0 q=0,0,0 u=9 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"peg 2 4\n",
        [
            b"ok r=16\n",
            b"! st r=16 t=121 n=3 d=0 w=-1 x=0 f=0,0,4 b=0,0,0 g=0,0,0 q=0,0,0 u=10 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"undo\n",
        [
            b"ok r=17\n",
            b"! st r=17 t=121 n=3 d=0 w=-1 x=0 f=0,0,0 b=0,0,0 g=0,0,0 q=0,0,0 u=9 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"undo\n",
        [
            b"ok r=18\n",
            b"! st r=18 t=61 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=8 x2=0 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"new 121\n",
        [
            b"ok r=19\n",
            b"! st r=19 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=9 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # winning: the peg stops in the win hole, w and x tell the result
    (
        b"set 0 119 110\n",
        [
            b"ok r=20\n",
            b"! st r=20 t=121 n=2 d=0 w=-1 x=0 f=119,0 b=110,0 g=0,0 q=0,0 u=10 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"set 1 70 65\n",
        [
            b"ok r=21\n",
            b"! st r=21 t=121 n=2 d=0 w=-1 x=0 f=119,70 b=110,65 g=0,0 q=0,0 u=11 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#w1 peg 0 2\n",
        [
            b"#w1 ok r=22\n",
            b"! st r=22 t=121 n=2 d=0 w=0 x=2 f=121,70 b=119,65 g=1,0 q=0,0 u=12 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (b"peg 1 2\n", [b"err game_over the game is over: start a new game or undo\n"]),
    (b"pend 1 3\n", [b"err game_over the game is over\n"]),
    (b"pend 1 0\n", [b"ok r=22\n"]),
    (b"set 1 121\n", [b"err game_over another player has already won\n"]),
    (
        b"undo\n",
        [
            b"ok r=23\n",
            b"! st r=23 t=121 n=2 d=0 w=-1 x=0 f=119,70 b=110,65 g=0,0 q=0,0 u=11 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"set 1 95 90\n",
        [
            b"ok r=24\n",
            b"! st r=24 t=121 n=2 d=0 w=-1 x=0 f=119,95 b=110,90 g=0,0 q=0,0 u=12 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"peg 0 2\n",
        [
            b"ok r=25\n",
            b"! st r=25 t=121 n=2 d=0 w=0 x=1 f=121,95 b=119,90 g=1,0 q=0,0 u=13 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"undo\n",
        [
            b"ok r=26\n",
            b"! st r=26 t=121 n=2 d=0 w=-1 x=0 f=119,95 b=110,90 g=0,0 q=0,0 u=12 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"set 1 40 30\n",
        [
            b"ok r=27\n",
            b"! st r=27 t=121 n=2 d=0 w=-1 x=0 f=119,40 b=110,30 g=0,0 q=0,0 u=13 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"peg 0 5\n",
        [
            b"ok r=28\n",
            b"! st r=28 t=121 n=2 d=0 w=0 x=3 f=121,40 b=119,30 g=1,0 q=0,0 u=14 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"undo\n",
        [
            b"ok r=29\n",
            b"! st r=29 t=121 n=2 d=0 w=-1 x=0 f=119,40 b=110,30 g=0,0 q=0,0 u=13 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"games x2 1\n",
        [
            b"ok g=0,0 x2=1\n",
            b"! st r=30 t=121 n=2 d=0 w=-1 x=0 f=119,40 b=110,30 g=0,0 q=0,0 u=13 x2=1 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"peg 0 5\n",
        [
            b"ok r=31\n",
            b"! st r=31 t=121 n=2 d=0 w=0 x=3 f=121,40 b=119,30 g=2,0 q=0,0 u=14 x2=1 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # a new game after a two-player win: the loser deals first
    (
        b"new\n",
        [
            b"ok r=32\n",
            b"! st r=32 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=0,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # the last 8 state-changing replies per link are remembered
    (
        b"#r1 pend 0 1\n",
        [
            b"#r1 ok r=33\n",
            b"! st r=33 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=1,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#r2 pend 0 2\n",
        [
            b"#r2 ok r=34\n",
            b"! st r=34 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=2,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#r3 pend 0 3\n",
        [
            b"#r3 ok r=35\n",
            b"! st r=35 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=3,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#r4 pend 0 4\n",
        [
            b"#r4 ok r=36\n",
            b"! st r=36 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=4,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#r5 pend 0 5\n",
        [
            b"#r5 ok r=37\n",
            b"! st r=37 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=5,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#r6 pend 0 6\n",
        [
            b"#r6 ok r=38\n",
            b"! st r=38 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=6,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#r7 pend 0 7\n",
        [
            b"#r7 ok r=39\n",
            b"! st r=39 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=7,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#r8 pend 0 8\n",
        [
            b"#r8 ok r=40\n",
            b"! st r=40 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=8,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#r9 pend 0 9\n",
        [
            b"#r9 ok r=41\n",
            b"! st r=41 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=9,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#r1 pend 0 1\n",
        [
            b"#r1 ok r=42\n",
            b"! st r=42 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=1,0 u=15 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (b"#r9 pend 0 9\n", [b"#r9 ok r=41\n"]),
    # an error reply to a changing request is remembered too
    (b"#e1 peg 0 30\n", [b"#e1 err bad_points points must be 1..29\n"]),
    (b"#e1 peg 0 30\n", [b"#e1 err bad_points points must be 1..29\n"]),
    # framing: empty and blank lines are ignored; an id without a verb is a bad line
    (b"\n", []),
    (b"#\n", [b"err bad_line not a request line\n"]),
    (b"#1\n", [b"#1 err bad_line not a request line\n"]),
    (b"#123456789 ping\n", [b"err bad_line not a request line\n"]),
    (b"#a-b ping\n", [b"err bad_line not a request line\n"]),
    (b"#a.b ping\n", [b"err bad_line not a request line\n"]),
    (b"#ab,ping\n", [b"err bad_line not a request line\n"]),
    # 63 bytes and the newline: the longest request
    (b"#L63 ping" + b" " * 54 + b"\n", [b"#L63 ok\n"]),
    # one byte more: discarded up to the newline, one error; the next line is fine
    (b"#L64 ping" + b" " * 55 + b"\n", [b"#L64 err too_long line too long\n"]),
    # with \r\n the \r counts: 62 bytes, then \r\n, is the longest
    (b"#C62 ping" + b" " * 53 + b"\r\n", [b"#C62 ok\n"]),
    (b"#C63 ping" + b" " * 54 + b"\r\n", [b"#C63 err too_long line too long\n"]),
    (b"#T2 peg 0 1 " + b"x" * 100 + b"\n", [b"#T2 err too_long line too long\n"]),
    (b"x" * 100 + b"\n", [b"err too_long line too long\n"]),
    # the id is read before anything else, so even a bad line's error carries it
    (b"#5 peg\x01 0 1\n", [b"#5 err bad_line not a request line\n"]),
    # blank lines are not requests: no reply (a terminal's Enter, a CRLF)
    (b"\r\n", []),
    (b"   \n", []),
    (b"#9 ping\n", [b"#9 ok\n"]),
    # control bytes and non-ASCII: the whole line is rejected
    (b"peg 0 1\x03\n", [b"err bad_line not a request line\n"]),
    (b"\x04\n", [b"err bad_line not a request line\n"]),
    (b"peg 0\t1\n", [b"err bad_line not a request line\n"]),
    (b"peg 0\r1\n", [b"err bad_line not a request line\n"]),
    (b"\x7f\n", [b"err bad_line not a request line\n"]),
    (b"peg 0 \xe9\n", [b"err bad_line not a request line\n"]),
    # unknown verbs (verbs are lower case)
    (b"foo\n", [b"err unknown unknown command\n"]),
    (b"#3 foo\n", [b"#3 err unknown unknown command\n"]),
    (b"PEG 0 1\n", [b"err unknown unknown command\n"]),
    (b"peg0 1\n", [b"err unknown unknown command\n"]),
    # wrong number of arguments
    (b"peg 0\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"#x1 pend 0 1 2\n", [b"#x1 err bad_arg wrong number of arguments\n"]),
    (b"peg 0 1 2 3\n", [b"err bad_arg bad argument\n"]),
    (b"ping 1\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"#x2 hello 1\n", [b"#x2 err bad_arg wrong number of arguments\n"]),
    (b"st 1\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"undo 1\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"frame 1\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"set 0\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"new 121 2 0\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"deal 0 1\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"pend 0\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"bright 1 2\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"budget 1 2\n", [b"err bad_arg wrong number of arguments\n"]),
    # numbers: decimal digits, optional minus, at most 6 digits
    (b"peg a 1\n", [b"err bad_arg bad argument\n"]),
    (b"peg 0 x2\n", [b"err bad_arg expected a number\n"]),
    (b"peg 0 -\n", [b"err bad_arg bad argument\n"]),
    (b"peg 0 +5\n", [b"err bad_arg bad argument\n"]),
    (b"peg 0 5x\n", [b"err bad_arg bad argument\n"]),
    (b"peg 0 0x5\n", [b"err bad_arg bad argument\n"]),
    (b"peg 0 1000000\n", [b"err bad_arg bad argument\n"]),
    (b"peg 0 999999\n", [b"err bad_points points must be 1..29\n"]),
    (b"peg 0 -1\n", [b"err bad_points points must be 1..29\n"]),
    (b"peg 0 0\n", [b"err bad_points points must be 1..29\n"]),
    (b"peg 0 30\n", [b"err bad_points points must be 1..29\n"]),
    (b"peg 2 1\n", [b"err bad_player no such player\n"]),
    (b"peg -1 1\n", [b"err bad_player no such player\n"]),
    (
        b"#z peg 0 007\n",
        [
            b"#z ok r=43\n",
            b"! st r=43 t=121 n=2 d=1 w=-1 x=0 f=7,0 b=0,0 g=2,0 q=0,0 u=16 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # each verb's own errors
    (b"set 5 1\n", [b"err bad_player no such player\n"]),
    (
        b"set 0 1 2\n",
        [
            b"err bad_pegs need 0 <= back <= front <= target, back < target\n",
        ],
    ),
    (
        b"set 0 200\n",
        [
            b"err bad_pegs need 0 <= back <= front <= target, back < target\n",
        ],
    ),
    (b"set 0 80 10\n", [b"err bad_pegs pegs must be less than a lap apart\n"]),
    (b"set 0 x2\n", [b"err bad_arg expected a number\n"]),
    (b"new 100\n", [b"err bad_target target must be 61 or 121\n"]),
    (
        b"new 121 4\n",
        [
            b"err bad_players players must be 2 (or two partnerships) or 3\n",
        ],
    ),
    (
        b"new 61 1\n",
        [
            b"err bad_players players must be 2 (or two partnerships) or 3\n",
        ],
    ),
    (b"deal 3\n", [b"err bad_player no such player\n"]),
    (b"deal -1\n", [b"err bad_player no such player\n"]),
    (b"pend 0 30\n", [b"err bad_points pending points must be 0..29\n"]),
    (b"pend 0 -1\n", [b"err bad_points pending points must be 0..29\n"]),
    (b"pend 2 1\n", [b"err bad_player no such player\n"]),
    (b"games x2 2\n", [b"err bad_value x2 takes 0 or 1\n"]),
    (b"games x2\n", [b"err bad_arg games [clear | x2 0|1]\n"]),
    (b"games foo\n", [b"err bad_arg bad argument\n"]),
    (b"games clear 1\n", [b"err bad_arg games [clear | x2 0|1]\n"]),
    (b"games 1\n", [b"err bad_arg games [clear | x2 0|1]\n"]),
    (b"bright 256\n", [b"err bad_value brightness must be 0..255\n"]),
    (b"bright -1\n", [b"err bad_value brightness must be 0..255\n"]),
    (b"budget 100\n", [b"err bad_value budget must be 150..10000 mA\n"]),
    (b"budget 10001\n", [b"err bad_value budget must be 150..10000 mA\n"]),
    (
        b"budget 150\n",
        [
            b"ok bright=100 budget=150\n",
            b"! cfg bright=100 budget=150\n",
        ],
    ),
    # admission (who may change the board over Bluetooth): this link is USB, always trusted
    (b"admit\n", [b"ok open=0 you=1 admitted=0\n"]),
    (
        b"#o1 admit open 1\n",
        [
            b"#o1 ok open=1 you=1 admitted=0\n",
            b"! admit open=1 you=1 admitted=0\n",
        ],
    ),
    (
        b"admit open 0\n",
        [
            b"ok open=0 you=1 admitted=0\n",
            b"! admit open=0 you=1 admitted=0\n",
        ],
    ),
    (b"admit clear\n", [b"ok open=0 you=1 admitted=0\n"]),
    (b"admit open 2\n", [b"err bad_value open takes 0 or 1\n"]),
    (b"admit open\n", [b"err bad_arg admit [open 0|1 | clear]\n"]),
    (b"admit x2 1\n", [b"err bad_arg admit [open 0|1 | clear]\n"]),
    (b"admit 1\n", [b"err bad_arg admit [open 0|1 | clear]\n"]),
    (b"admit clear 1 2 3\n", [b"err bad_arg bad argument\n"]),
    (b"peg 0 open\n", [b"err bad_arg expected a number\n"]),
    # too long: the id is read whole wherever it starts, or the error carries none
    (b" " * 61 + b"#ab xx\n", [b"#ab err too_long line too long\n"]),
    (b"#abcdefgh " + b"x" * 60 + b"\n", [b"#abcdefgh err too_long line too long\n"]),
    (b" " * 100 + b"#far ping\n", [b"#far err too_long line too long\n"]),
    (b"#abcdefghi " + b"x" * 60 + b"\n", [b"err too_long line too long\n"]),
    (b"#" + b"a" * 70 + b"\n", [b"err too_long line too long\n"]),
    # numbers: at most 6 digits, leading zeros included
    (b"peg 0 0000001\n", [b"err bad_arg bad argument\n"]),
    (b"bright " + b"0" * 38 + b"128\n", [b"err bad_arg bad argument\n"]),
    (
        b"#w6 peg 1 000003\n",
        [
            b"#w6 ok r=44\n",
            b"! st r=44 t=121 n=2 d=1 w=-1 x=0 f=7,3 b=0,0 g=2,0 q=0,0 u=17 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # setting what is already so changes nothing: no new revision, no event
    (b"games x2 1\n", [b"ok g=2,0 x2=1\n"]),
    (b"bright 100\n", [b"ok bright=100 budget=150\n"]),
    (b"#s0 set 1 3 0\n", [b"#s0 ok r=44\n"]),
    (b"deal 1\n", [b"ok d=1\n"]),
    (b"pend 0 0\n", [b"ok r=44\n"]),
    (b"admit open 0\n", [b"ok open=0 you=1 admitted=0\n"]),
    (b"admit clear\n", [b"ok open=0 you=1 admitted=0\n"]),
    # every reply to a line with an id is remembered, errors included (not reading requests')
    (b"#z1 peg 0 1 2 3 4\n", [b"#z1 err bad_arg bad argument\n"]),
    (b"#z1 peg 0 1\n", [b"#z1 err bad_arg bad argument\n"]),
    (b"#z2 pegg 0 1\n", [b"#z2 err unknown unknown command\n"]),
    (b"#z2 peg 0 1\n", [b"#z2 err unknown unknown command\n"]),
    (b"#z3 peg 0 1" + b" " * 60 + b"\n", [b"#z3 err too_long line too long\n"]),
    (b"#z3 peg 0 1\n", [b"#z3 err too_long line too long\n"]),
    (b"#z4 st 1\n", [b"#z4 err bad_arg wrong number of arguments\n"]),
    (b"#z4 ping\n", [b"#z4 ok\n"]),
    # the games won never go below zero: a cleared tally loses nothing when a win is taken back
    (
        b"#v1 set 0 121 100\n",
        [
            b"#v1 ok r=45\n",
            b"! st r=45 t=121 n=2 d=1 w=0 x=3 f=121,3 b=100,0 g=4,0 q=0,0 u=18 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#v2 games clear\n",
        [
            b"#v2 ok g=0,0 x2=1\n",
            b"! st r=46 t=121 n=2 d=1 w=0 x=3 f=121,3 b=100,0 g=0,0 q=0,0 u=19 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#v3 set 0 100 90\n",
        [
            b"#v3 ok r=47\n",
            b"! st r=47 t=121 n=2 d=1 w=-1 x=0 f=100,3 b=90,0 g=0,0 q=0,0 u=20 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#v4 undo\n",
        [
            b"#v4 ok r=48\n",
            b"! st r=48 t=121 n=2 d=1 w=0 x=3 f=121,3 b=100,0 g=0,0 q=0,0 u=19 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#v5 undo\n",
        [
            b"#v5 ok r=49\n",
            b"! st r=49 t=121 n=2 d=1 w=0 x=3 f=121,3 b=100,0 g=4,0 q=0,0 u=18 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#v6 set 0 100 90\n",
        [
            b"#v6 ok r=50\n",
            b"! st r=50 t=121 n=2 d=1 w=-1 x=0 f=100,3 b=90,0 g=2,0 q=0,0 u=19 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # brief events (since 1.2): this link asks for them; a peg or a preview is one short line,
    # any other change the whole state as before
    (b"brief\n", [b"ok brief=0\n"]),
    (b"#k1 brief 1\n", [b"#k1 ok brief=1\n"]),
    (b"#k2 peg 1 4\n", [b"#k2 ok r=51\n", b"! p 51 1 7 3\n"]),
    (b"#k3 pend 0 6\n", [b"#k3 ok r=52\n", b"! q 52 0 6\n"]),
    (b"#k4 peg 0 6\n", [b"#k4 ok r=53\n", b"! p 53 0 106 100\n"]),
    (
        b"#k5 undo\n",
        [
            b"#k5 ok r=54\n",
            b"! st r=54 t=121 n=2 d=1 w=-1 x=0 f=100,7 b=90,3 g=2,0 q=0,0 u=20 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (b"#k6 pend 0 0\n", [b"#k6 ok r=54\n"]),
    (b"brief 2\n", [b"err bad_value brief takes 0 or 1\n"]),
    (b"brief 1 1\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"brief x2\n", [b"err bad_arg expected a number\n"]),
    (b"#k7 brief 0\n", [b"#k7 ok brief=0\n"]),
    (
        b"#k8 peg 1 1\n",
        [
            b"#k8 ok r=55\n",
            b"! st r=55 t=121 n=2 d=1 w=-1 x=0 f=100,8 b=90,7 g=2,0 q=0,0 u=21 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # an event after every request (since 1.2): requests sent together get theirs one by one too
    (b"every\n", [b"ok every=0\n"]),
    (b"#e1 every 1\n", [b"#e1 ok every=1\n"]),
    (b"every 2\n", [b"err bad_value every takes 0 or 1\n"]),
    (b"every 1 0\n", [b"err bad_arg wrong number of arguments\n"]),
    (b"#e2 every 0\n", [b"#e2 ok every=0\n"]),
    # conditional changes (since 1.3): `@REV` before the verb applies the request only while the
    # board's revision is REV; a third argument to peg, only while the player's front is that
    (b"#c1 @54 peg 1 2\n", [b"#c1 err stale the board has changed since that revision\n"]),
    (
        b"#c2 @55 peg 1 2\n",
        [
            b"#c2 ok r=56\n",
            b"! st r=56 t=121 n=2 d=1 w=-1 x=0 f=100,10 b=90,8 g=2,0 q=0,0 u=22 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # a resend is answered from memory, whatever the revision is now
    (b"#c2 @55 peg 1 2\n", [b"#c2 ok r=56\n"]),
    (b"#c3 peg 1 2 8\n", [b"#c3 err stale the front is not that\n"]),
    (
        b"#c4 peg 1 2 10\n",
        [
            b"#c4 ok r=57\n",
            b"! st r=57 t=121 n=2 d=1 w=-1 x=0 f=100,12 b=90,10 g=2,0 q=0,0 u=23 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (b"@56 st\n", [b"err stale the board has changed since that revision\n"]),
    (b"#c5 peg 2 1 0\n", [b"#c5 err bad_player no such player\n"]),
    (b"peg 0 1 x2\n", [b"err bad_arg expected a number\n"]),
    (b"@x peg 0 1\n", [b"err bad_arg bad argument\n"]),
    (b"#c6 @ peg 0 1\n", [b"#c6 err bad_arg bad argument\n"]),
    (b"@1234567890 peg 0 1\n", [b"err bad_arg bad argument\n"]),
    (b"@57\n", [b"err bad_line not a request line\n"]),
    # after all that, the state
    (
        b"#end @57 st\n",
        [
            b"#end ok r=57 t=121 n=2 d=1 w=-1 x=0 f=100,12 b=90,10 g=2,0 q=0,0 u=23 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n"
        ],
    ),
]

# The state the session above ends in (the '#end st' reply), decoded.
END_STATE = {
    "rev": 57,
    "target": 121,
    "players": 2,
    "dealer": 1,
    "winner": -1,
    "result": 0,
    "front": [100, 12],
    "back": [90, 10],
    "games": [2, 0],
    "pending": [0, 0],
    "undo": 23,
    "skunk_double": 1,
    "game": 4,
    "match": 0,
    "match_kind": 0,
    "match_game": 0,
    "match_number": 0,
}

# Two links on one fresh board. Step: (sender, data, [lines on link 0], [lines on link 1]).
# sender 0 or 1: that link sends the request `data`; its reply goes to it alone, events go to
# every link. "button": player data[0] scores data[1] on the board itself (GameState.peg, then
# Dispatcher.publish_if_changed(), as the button task does). "start": Dispatcher.announce().
TWO_LINKS = [
    (
        0,
        b"#7 peg 0 12\n",
        [
            b"#7 ok r=1\n",
            b"! st r=1 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
        [
            b"! st r=1 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
        ],
    ),
    # ids are remembered per sender: the same id from another sender is another request
    (
        1,
        b"#7 peg 0 12\n",
        [
            b"! st r=2 t=121 n=2 d=0 w=-1 x=0 f=24,0 b=12,0 g=0,0 q=0,0 u=2 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
        ],
        [
            b"#7 ok r=2\n",
            b"! st r=2 t=121 n=2 d=0 w=-1 x=0 f=24,0 b=12,0 g=0,0 q=0,0 u=2 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (0, b"#7 peg 0 12\n", [b"#7 ok r=1\n"], []),
    (
        "button",
        (1, 3),
        [
            b"! st r=3 t=121 n=2 d=0 w=-1 x=0 f=24,3 b=12,0 g=0,0 q=0,0 u=3 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
        ],
        [
            b"! st r=3 t=121 n=2 d=0 w=-1 x=0 f=24,3 b=12,0 g=0,0 q=0,0 u=3 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
        ],
    ),
    (
        1,
        b"#c bright 50\n",
        [b"! cfg bright=50 budget=400\n"],
        [b"#c ok bright=50 budget=400\n", b"! cfg bright=50 budget=400\n"],
    ),
    (
        1,
        b"st\n",
        [],
        [
            b"ok r=3 t=121 n=2 d=0 w=-1 x=0 f=24,3 b=12,0 g=0,0 q=0,0 u=3 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
        ],
    ),
    ("start", None, [HELLO_EVENT], [HELLO_EVENT]),
]

# Admission: link 0 is USB (always trusted), link 1 a Bluetooth central that is not admitted
# (address type 1, C0:11:22:33:44:55). Steps as in TWO_LINKS, plus "tap": the deal button is
# tapped (Admission.take_tap, as the panel asks it first; then Dispatcher.publish_if_changed(), as
# the button task does).
DENIED = b"err denied tap the deal button on the board to admit this device\n"
ADMISSION = [
    # a central that is not admitted reads and watches...
    (1, b"#h1 hello\n", [], [b"#h1 ok " + HELLO_FIELDS + b"\n"]),
    (
        1,
        b"st\n",
        [],
        [
            b"ok r=0 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=0 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
        ],
    ),
    (1, b"games\n", [], [b"ok g=0,0 x2=0\n"]),
    (1, b"bright\n", [], [b"ok bright=128 budget=400\n"]),
    (1, b"admit\n", [], [b"ok open=0 you=0 admitted=0\n"]),
    # ...and sets what only its own link receives (brief events, an event after every request)
    (1, b"brief\n", [], [b"ok brief=0\n"]),
    (1, b"#e3 every 1\n", [], [b"#e3 ok every=1\n"]),
    (1, b"#e4 every 0\n", [], [b"#e4 ok every=0\n"]),
    (
        0,
        b"#u1 peg 0 12\n",
        [
            b"#u1 ok r=1\n",
            b"! st r=1 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
        [
            b"! st r=1 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
        ],
    ),
    # ...but every change is refused, and the board calls for a tap of deal
    (1, b"#p1 peg 1 5\n", [], [b"#p1 " + DENIED]),
    (1, b"deal\n", [], [DENIED]),
    (1, b"games clear\n", [], [DENIED]),
    (1, b"bright 10\n", [], [DENIED]),
    (1, b"test\n", [], [DENIED]),
    (1, b"admit open 1\n", [], [DENIED]),
    # the tap admits it: every link hears of it
    ("tap", None, [b"! admit open=0 you=1 admitted=1\n"], [b"! admit open=0 you=1 admitted=1\n"]),
    # a refused request was not remembered: the same id is applied now
    (
        1,
        b"#p1 peg 1 5\n",
        [
            b"! st r=2 t=121 n=2 d=0 w=-1 x=0 f=12,5 b=0,0 g=0,0 q=0,0 u=2 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
        ],
        [
            b"#p1 ok r=2\n",
            b"! st r=2 t=121 n=2 d=0 w=-1 x=0 f=12,5 b=0,0 g=0,0 q=0,0 u=2 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (1, b"admit\n", [], [b"ok open=0 you=1 admitted=1\n"]),
    # no central waits: a tap admits nobody (the panel does the tap's usual action)
    ("tap", None, [], []),
    # the owner forgets every admitted device: the central is refused again
    (
        0,
        b"admit clear\n",
        [b"ok open=0 you=1 admitted=0\n", b"! admit open=0 you=1 admitted=0\n"],
        [b"! admit open=0 you=0 admitted=0\n"],
    ),
    (1, b"undo\n", [], [DENIED]),
    # open mode: anyone may change the board
    (
        0,
        b"#o2 admit open 1\n",
        [b"#o2 ok open=1 you=1 admitted=0\n", b"! admit open=1 you=1 admitted=0\n"],
        [b"! admit open=1 you=0 admitted=0\n"],
    ),
    (
        1,
        b"undo\n",
        [
            b"! st r=3 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n"
        ],
        [
            b"ok r=3\n",
            b"! st r=3 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=1 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        0,
        b"admit open 0\n",
        [b"ok open=0 you=1 admitted=0\n", b"! admit open=0 you=1 admitted=0\n"],
        [b"! admit open=0 you=0 admitted=0\n"],
    ),
    (1, b"#p2 peg 0 1\n", [], [b"#p2 " + DENIED]),
]
ADMISSION_ADDRESS = b"\x01\xc0\x11\x22\x33\x44\x55"

# The document's rules beyond the first session, on a fresh board and one link (USB), as in
# VECTORS: (bytes the host sends, [the lines the board writes back]). A step may send several
# requests at once (the board reads them together).
RULES = [
    # the games won after a correction (section 4): a 61-20 win with x2=1 is worth two games;
    # x2 back to 0, the loser's peg moved but still under the skunk line: the same result,
    # nothing settled again; over the line: another result, settled again under x2=0
    (
        b"#t1 new 61\n",
        [
            b"#t1 ok r=1\n",
            b"! st r=1 t=61 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#t2 games x2 1\n",
        [
            b"#t2 ok g=0,0 x2=1\n",
            b"! st r=2 t=61 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=1 x2=1 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#t3 set 0 60 55\n",
        [
            b"#t3 ok r=3\n",
            b"! st r=3 t=61 n=2 d=1 w=-1 x=0 f=60,0 b=55,0 g=0,0 q=0,0 u=2 x2=1 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#t4 set 1 20 15\n",
        [
            b"#t4 ok r=4\n",
            b"! st r=4 t=61 n=2 d=1 w=-1 x=0 f=60,20 b=55,15 g=0,0 q=0,0 u=3 x2=1 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#t5 peg 0 1\n",
        [
            b"#t5 ok r=5\n",
            b"! st r=5 t=61 n=2 d=1 w=0 x=2 f=61,20 b=60,15 g=2,0 q=0,0 u=4 x2=1 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#t6 games x2 0\n",
        [
            b"#t6 ok g=2,0 x2=0\n",
            b"! st r=6 t=61 n=2 d=1 w=0 x=2 f=61,20 b=60,15 g=2,0 q=0,0 u=4 x2=0 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#t7 set 1 10 0\n",
        [
            b"#t7 ok r=7\n",
            b"! st r=7 t=61 n=2 d=1 w=0 x=2 f=61,10 b=60,0 g=2,0 q=0,0 u=5 x2=0 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#t8 set 1 40 20\n",
        [
            b"#t8 ok r=8\n",
            b"! st r=8 t=61 n=2 d=1 w=0 x=1 f=61,40 b=60,20 g=1,0 q=0,0 u=6 x2=0 gn=2 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # after `games clear` a won game's games are out of the tally: a correction that keeps the
    # winner adds nothing (another result included), one that takes the win back takes nothing
    (
        b"#t9 new 121\n",
        [
            b"#t9 ok r=9\n",
            b"! st r=9 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=1,0 q=0,0 u=7 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#ta set 0 120 110\n",
        [
            b"#ta ok r=10\n",
            b"! st r=10 t=121 n=2 d=1 w=-1 x=0 f=120,0 b=110,0 g=1,0 q=0,0 u=8 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#tb set 1 20 15\n",
        [
            b"#tb ok r=11\n",
            b"! st r=11 t=121 n=2 d=1 w=-1 x=0 f=120,20 b=110,15 g=1,0 q=0,0 u=9 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#tc peg 0 1\n",
        [
            b"#tc ok r=12\n",
            b"! st r=12 t=121 n=2 d=1 w=0 x=3 f=121,20 b=120,15 g=2,0 q=0,0 u=10 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#td games clear\n",
        [
            b"#td ok g=0,0 x2=0\n",
            b"! st r=13 t=121 n=2 d=1 w=0 x=3 f=121,20 b=120,15 g=0,0 q=0,0 u=11 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#te set 1 75 70\n",
        [
            b"#te ok r=14\n",
            b"! st r=14 t=121 n=2 d=1 w=0 x=2 f=121,75 b=120,70 g=0,0 q=0,0 u=12 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#tf set 0 110 100\n",
        [
            b"#tf ok r=15\n",
            b"! st r=15 t=121 n=2 d=1 w=-1 x=0 f=110,75 b=100,70 g=0,0 q=0,0 u=13 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#tg undo\n",
        [
            b"#tg ok r=16\n",
            b"! st r=16 t=121 n=2 d=1 w=0 x=2 f=121,75 b=120,70 g=0,0 q=0,0 u=12 x2=0 gn=3 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # three players: the result is judged on the lowest loser (50: a double skunk, still with
    # the other loser at 80); at 70 a skunk, settled again under x2=1
    (
        b"#th new 121 3\n",
        [
            b"#th ok r=17\n",
            b"! st r=17 t=121 n=3 d=0 w=-1 x=0 f=0,0,0 b=0,0,0 g=0,0,0 q=0,0,0 u=13 x2=0 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#ti set 0 120 0\n",
        [
            b"#ti ok r=18\n",
            b"! st r=18 t=121 n=3 d=0 w=-1 x=0 f=120,0,0 b=0,0,0 g=0,0,0 q=0,0,0 u=14 x2=0 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#tj set 1 50 0\n",
        [
            b"#tj ok r=19\n",
            b"! st r=19 t=121 n=3 d=0 w=-1 x=0 f=120,50,0 b=0,0,0 g=0,0,0 q=0,0,0 u=15 x2=0 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#tk set 2 95 0\n",
        [
            b"#tk ok r=20\n",
            b"! st r=20 t=121 n=3 d=0 w=-1 x=0 f=120,50,95 b=0,0,0 g=0,0,0 q=0,0,0 u=16 x2=0 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#tl peg 0 1\n",
        [
            b"#tl ok r=21\n",
            b"! st r=21 t=121 n=3 d=0 w=0 x=3 f=121,50,95 b=120,0,0 g=1,0,0 q=0,0,0 u=17 x2=0 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#tm games x2 1\n",
        [
            b"#tm ok g=1,0,0 x2=1\n",
            b"! st r=22 t=121 n=3 d=0 w=0 x=3 f=121,50,95 b=120,0,0 g=1,0,0 q=0,0,0 u=17 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#tn set 2 80 0\n",
        [
            b"#tn ok r=23\n",
            b"! st r=23 t=121 n=3 d=0 w=0 x=3 f=121,50,80 b=120,0,0 g=1,0,0 q=0,0,0 u=18 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#to set 1 70 0\n",
        [
            b"#to ok r=24\n",
            b"! st r=24 t=121 n=3 d=0 w=0 x=2 f=121,70,80 b=120,0,0 g=2,0,0 q=0,0,0 u=19 x2=1 gn=4 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # pending counts (section 4): a set that moves a player's pegs clears the player's count,
    # a set to the pegs it has changes nothing (the count stays); undo clears every count
    (
        b"#p1 new 121 2\n",
        [
            b"#p1 ok r=25\n",
            b"! st r=25 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=20 x2=1 gn=5 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#p2 pend 0 5\n",
        [
            b"#p2 ok r=26\n",
            b"! st r=26 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=5,0 u=20 x2=1 gn=5 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (b"#p3 set 0 0 0\n", [b"#p3 ok r=26\n"]),
    (
        b"#p4 set 0 4 0\n",
        [
            b"#p4 ok r=27\n",
            b"! st r=27 t=121 n=2 d=0 w=-1 x=0 f=4,0 b=0,0 g=0,0 q=0,0 u=21 x2=1 gn=5 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#p5 pend 1 3\n",
        [
            b"#p5 ok r=28\n",
            b"! st r=28 t=121 n=2 d=0 w=-1 x=0 f=4,0 b=0,0 g=0,0 q=0,3 u=21 x2=1 gn=5 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#p6 pend 0 2\n",
        [
            b"#p6 ok r=29\n",
            b"! st r=29 t=121 n=2 d=0 w=-1 x=0 f=4,0 b=0,0 g=0,0 q=2,3 u=21 x2=1 gn=5 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#p7 undo\n",
        [
            b"#p7 ok r=30\n",
            b"! st r=30 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=20 x2=1 gn=5 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # a new game with another number of players: player 0 deals first, the tally starts at 0
    (
        b"#d1 deal 1\n",
        [
            b"#d1 ok d=1\n",
            b"! st r=31 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=21 x2=1 gn=5 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#d2 new 121 3\n",
        [
            b"#d2 ok r=32\n",
            b"! st r=32 t=121 n=3 d=0 w=-1 x=0 f=0,0,0 b=0,0,0 g=0,0,0 q=0,0,0 u=22 x2=1 gn=6 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#d3 deal 2\n",
        [
            b"#d3 ok d=2\n",
            b"! st r=33 t=121 n=3 d=2 w=-1 x=0 f=0,0,0 b=0,0,0 g=0,0,0 q=0,0,0 u=23 x2=1 gn=6 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#d4 new 121 2\n",
        [
            b"#d4 ok r=34\n",
            b"! st r=34 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=24 x2=1 gn=7 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # deal after a finished game passes the deal as always; the next two-player game is dealt
    # first by the loser all the same
    (
        b"#d5 set 0 121 100\n",
        [
            b"#d5 ok r=35\n",
            b"! st r=35 t=121 n=2 d=0 w=0 x=3 f=121,0 b=100,0 g=2,0 q=0,0 u=25 x2=1 gn=7 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#d6 deal\n",
        [
            b"#d6 ok d=1\n",
            b"! st r=36 t=121 n=2 d=1 w=0 x=3 f=121,0 b=100,0 g=2,0 q=0,0 u=26 x2=1 gn=7 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    (
        b"#d7 new\n",
        [
            b"#d7 ok r=37\n",
            b"! st r=37 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=0,0 u=27 x2=1 gn=8 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # requests read together (section 5): their replies, then one event of each kind that
    # changed, with the values after the last, even when they end where they began
    (
        b"bright 10\nbright 128\n",
        [
            b"ok bright=10 budget=400\n",
            b"ok bright=128 budget=400\n",
            b"! cfg bright=128 budget=400\n",
        ],
    ),
    (
        b"admit open 1\nadmit open 0\n",
        [
            b"ok open=1 you=1 admitted=0\n",
            b"ok open=0 you=1 admitted=0\n",
            b"! admit open=0 you=1 admitted=0\n",
        ],
    ),
    (
        b"#c1 peg 0 1\n#c2 undo\n",
        [
            b"#c1 ok r=38\n",
            b"#c2 ok r=39\n",
            b"! st r=39 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=0,0 u=27 x2=1 gn=8 m=0 mk=0 mg=0 mn=0\n",
        ],
    ),
    # a line of spaces is blank up to the longest request; longer, it is too long (section 1)
    (b" " * 63 + b"\n", []),
    (b" " * 64 + b"\n", [b"err too_long line too long\n"]),
    # every without an argument only reads: its reply is not remembered (section 2)
    (b"#v7 every\n", [b"#v7 ok every=0\n"]),
    (b"#v7 every 1\n", [b"#v7 ok every=1\n"]),
    (b"#v8 every 0\n", [b"#v8 ok every=0\n"]),
    # health takes no argument (its reply's figures change with every run: no literal vector)
    (b"#h1 health 1\n", [b"#h1 err bad_arg wrong number of arguments\n"]),
    # after all that, the state
    (
        b"#end st\n",
        [
            b"#end ok r=39 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=2,0 q=0,0 u=27 x2=1 gn=8 m=0 mk=0 mg=0 mn=0\n"
        ],
    ),
]

# Match play and the board's history (since 1.4), another session from a fresh board on one link
# (USB), as in VECTORS: (bytes the host sends, [the lines the board writes back]).
MATCH = [
    # match play (since 1.4): none on a fresh board
    (b"match\n", [b"ok r=0 m=0 mk=0 mg=0 mn=0\n"]),
    # a best of 3 starts with a new game, the tally at 0 (one undo step)
    (
        b"#m1 match best 3\n",
        [
            b"#m1 ok r=1 m=3 mk=0 mg=1 mn=1\n",
            b"! st r=1 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=1 x2=0 gn=2 m=3 mk=0 mg=1 mn=1\n",
        ],
    ),
    # a resend: its reply again, nothing applied twice
    (b"#m1 match best 3\n", [b"#m1 ok r=1 m=3 mk=0 mg=1 mn=1\n"]),
    # skunks count two games towards it
    (
        b"#m2 games x2 1\n",
        [
            b"#m2 ok g=0,0 x2=1\n",
            b"! st r=2 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=1 x2=1 gn=2 m=3 mk=0 mg=1 mn=1\n",
        ],
    ),
    (
        b"#m3 set 1 95 90\n",
        [
            b"#m3 ok r=3\n",
            b"! st r=3 t=121 n=2 d=1 w=-1 x=0 f=0,95 b=0,90 g=0,0 q=0,0 u=2 x2=1 gn=2 m=3 mk=0 mg=1 mn=1\n",
        ],
    ),
    (
        b"#m4 set 0 120 110\n",
        [
            b"#m4 ok r=4\n",
            b"! st r=4 t=121 n=2 d=1 w=-1 x=0 f=120,95 b=110,90 g=0,0 q=0,0 u=3 x2=1 gn=2 m=3 mk=0 mg=1 mn=1\n",
        ],
    ),
    # game 1 of the match won, the game still on the board: not in the history yet
    (
        b"#m5 peg 0 1\n",
        [
            b"#m5 ok r=5\n",
            b"! st r=5 t=121 n=2 d=1 w=0 x=1 f=121,95 b=120,90 g=1,0 q=0,0 u=4 x2=1 gn=2 m=3 mk=0 mg=1 mn=1\n",
        ],
    ),
    (b"hist\n", [b"ok kept=0 most=32 at=0 next=0\n"]),
    # the next game of the match: the won game goes into the history
    (
        b"#m6 new\n",
        [
            b"#m6 ok r=6\n",
            b"! st r=6 t=121 n=2 d=1 w=-1 x=0 f=0,0 b=0,0 g=1,0 q=0,0 u=5 x2=1 gn=3 m=3 mk=0 mg=2 mn=1\n",
        ],
    ),
    (
        b"#m7 hist\n",
        [b"#m7 ok kept=1 most=32 at=0 2/0/121/2/0/1/1/121,95/120,90/1,0/1/1/3/0 next=0\n"],
    ),
    # game 2: a double skunk, two games with x2=1: the match is won (two needed)
    (
        b"#m8 set 0 40 30\n",
        [
            b"#m8 ok r=7\n",
            b"! st r=7 t=121 n=2 d=1 w=-1 x=0 f=40,0 b=30,0 g=1,0 q=0,0 u=6 x2=1 gn=3 m=3 mk=0 mg=2 mn=1\n",
        ],
    ),
    (
        b"#m9 set 1 120 100\n",
        [
            b"#m9 ok r=8\n",
            b"! st r=8 t=121 n=2 d=1 w=-1 x=0 f=40,120 b=30,100 g=1,0 q=0,0 u=7 x2=1 gn=3 m=3 mk=0 mg=2 mn=1\n",
        ],
    ),
    (
        b"#ma peg 1 2\n",
        [
            b"#ma ok r=9\n",
            b"! st r=9 t=121 n=2 d=1 w=1 x=3 f=40,121 b=30,120 g=1,2 q=0,0 u=8 x2=1 gn=3 m=3 mk=0 mg=2 mn=1\n",
        ],
    ),
    # a new game after a match won: the next match of the same form
    (
        b"#mb new\n",
        [
            b"#mb ok r=10\n",
            b"! st r=10 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=9 x2=1 gn=4 m=3 mk=0 mg=1 mn=2\n",
        ],
    ),
    (b"hist 3\n", [b"ok kept=2 most=32 at=0 3/0/121/2/1/3/1/40,121/30,120/1,2/1/2/3/0 next=0\n"]),
    # undone: the match won is on the board again, its last game out of the history
    (
        b"#mc undo\n",
        [
            b"#mc ok r=11\n",
            b"! st r=11 t=121 n=2 d=1 w=1 x=3 f=40,121 b=30,120 g=1,2 q=0,0 u=8 x2=1 gn=3 m=3 mk=0 mg=2 mn=1\n",
        ],
    ),
    (b"hist 2\n", [b"ok kept=1 most=32 at=0 2/0/121/2/0/1/1/121,95/120,90/1,0/1/1/3/0 next=0\n"]),
    # no more match play (undoable); clearing it again changes nothing
    (
        b"#md match clear\n",
        [
            b"#md ok r=12 m=0 mk=0 mg=0 mn=1\n",
            b"! st r=12 t=121 n=2 d=1 w=1 x=3 f=40,121 b=30,120 g=1,2 q=0,0 u=9 x2=1 gn=3 m=0 mk=0 mg=0 mn=1\n",
        ],
    ),
    (b"match clear\n", [b"ok r=12 m=0 mk=0 mg=0 mn=1\n"]),
    (
        b"#me undo\n",
        [
            b"#me ok r=13\n",
            b"! st r=13 t=121 n=2 d=1 w=1 x=3 f=40,121 b=30,120 g=1,2 q=0,0 u=8 x2=1 gn=3 m=3 mk=0 mg=2 mn=1\n",
        ],
    ),
    # the forms a board plays: best of 3, 5, .. 15, first to 2..15
    (b"match first 20\n", [b"err bad_value best of 3..15 (odd) or first to 2..15\n"]),
    (b"match best 4\n", [b"err bad_value best of 3..15 (odd) or first to 2..15\n"]),
    (b"match best\n", [b"err bad_arg match [best N | first N | clear]\n"]),
    (b"match 3\n", [b"err bad_arg match [best N | first N | clear]\n"]),
    (b"match clear 1\n", [b"err bad_arg match [best N | first N | clear]\n"]),
    # hist takes a game number to start from
    (b"hist x2\n", [b"err bad_arg expected a number\n"]),
    (b"hist -1\n", [b"err bad_value hist takes a game number\n"]),
    (b"hist 1 2\n", [b"err bad_arg wrong number of arguments\n"]),
]

ENCODE_VECTORS = [
    (("peg", (0, 12), "7"), b"#7 peg 0 12\n"),
    (("peg", (1, 2, 10), "c4"), b"#c4 peg 1 2 10\n"),  # since 1.3: only while the front is 10
    (("peg", (1, 2), "c2", 55), b"#c2 @55 peg 1 2\n"),  # since 1.3: only while r is 55
    (("st", (), None, 0), b"@0 st\n"),
    (("peg", (0, 12), "a1b2"), b"#a1b2 peg 0 12\n"),
    (("peg", (1, 2), 12), b"#12 peg 1 2\n"),  # a number as the id is sent as its digits
    (("peg", (1, 4), "12345678"), b"#12345678 peg 1 4\n"),
    (("peg", (1, 5)), b"peg 1 5\n"),
    (("hello", (), "1"), b"#1 hello\n"),
    (("ping",), b"ping\n"),
    (("ping", (), "2"), b"#2 ping\n"),
    (("st", (), "3"), b"#3 st\n"),
    (("set", (0, 30, 20), "8"), b"#8 set 0 30 20\n"),
    (("set", (1, 7)), b"set 1 7\n"),
    (("undo", (), "u0"), b"#u0 undo\n"),
    (("new", (61,), "n1"), b"#n1 new 61\n"),
    (("new", (121, 3)), b"new 121 3\n"),
    (("new",), b"new\n"),
    (("deal",), b"deal\n"),
    (("deal", (0,), "9"), b"#9 deal 0\n"),
    (("pend", (1, 6)), b"pend 1 6\n"),
    (("games",), b"games\n"),
    (("games", ("x2", 1)), b"games x2 1\n"),
    (("games", ("clear",), "g1"), b"#g1 games clear\n"),
    (("bright", (100,), "b1"), b"#b1 bright 100\n"),
    (("budget", (500,)), b"budget 500\n"),
    (("frame", (), "4"), b"#4 frame\n"),
    (("admit",), b"admit\n"),
    (("admit", ("open", 1), "o1"), b"#o1 admit open 1\n"),
    (("admit", ("clear",)), b"admit clear\n"),
    (("health", (), "h1"), b"#h1 health\n"),  # (its reply varies: test_health_reports_the_board)
]

ENCODE_REJECTS = [
    ("peg", (0, 1), "123456789"),  # ids are 1..8 characters
    ("peg", (0, 1), ""),
    ("peg", (0, 1), "a-b"),  # ids are [0-9A-Za-z]
    ("peg", (0, 1), "a b"),
    ("fly", (), None),  # not a verb
    ("PEG", (0, 1), None),  # verbs are lower case
    ("peg", (0, "1\x03"), None),  # never a control byte
    ("peg", (0, "1\n"), None),
    ("set", (0, "1" * 60), None),  # longer than MAX_LINE
    ("peg", (0, 1), None, -1),  # a revision is 0 or more, at most 9 digits
    ("peg", (0, 1), None, 1234567890),
]

DECODE_VECTORS = [
    (b"#7 ok r=1\n", ("ok", "7", "", {"r": "1"}, "", ""), {"rev": 1}),
    (b"ok\n", ("ok", None, "", {}, "", ""), {}),
    (b"#2 ok\n", ("ok", "2", "", {}, "", ""), {}),
    (b"ok r=2\r\n", ("ok", None, "", {"r": "2"}, "", ""), {"rev": 2}),
    (b"#9 ok d=0\n", ("ok", "9", "", {"d": "0"}, "", ""), {"dealer": 0}),
    (
        b"ok g=0,0 x2=1\n",
        ("ok", None, "", {"g": "0,0", "x2": "1"}, "", ""),
        {"games": [0, 0], "skunk_double": 1},
    ),
    (
        b"#b1 ok bright=100 budget=400\n",
        ("ok", "b1", "", {"bright": "100", "budget": "400"}, "", ""),
        {},
    ),
    (
        b"#3 ok r=0 t=121 n=2 d=0 w=-1 x=0 f=0,0 b=0,0 g=0,0 q=0,0 u=0 x2=0\n",
        (
            "ok",
            "3",
            "",
            {
                "r": "0",
                "t": "121",
                "n": "2",
                "d": "0",
                "w": "-1",
                "x": "0",
                "f": "0,0",
                "b": "0,0",
                "g": "0,0",
                "q": "0,0",
                "u": "0",
                "x2": "0",
            },
            "",
            "",
        ),
        {
            "rev": 0,
            "target": 121,
            "players": 2,
            "dealer": 0,
            "winner": -1,
            "result": 0,
            "front": [0, 0],
            "back": [0, 0],
            "games": [0, 0],
            "pending": [0, 0],
            "undo": 0,
            "skunk_double": 0,
        },
    ),
    (
        b"! st r=1 t=121 n=2 d=0 w=-1 x=0 f=12,0 b=0,0 g=0,0 q=0,0 u=1 x2=0\n",
        (
            "event",
            None,
            "st",
            {
                "r": "1",
                "t": "121",
                "n": "2",
                "d": "0",
                "w": "-1",
                "x": "0",
                "f": "12,0",
                "b": "0,0",
                "g": "0,0",
                "q": "0,0",
                "u": "1",
                "x2": "0",
            },
            "",
            "",
        ),
        {
            "rev": 1,
            "target": 121,
            "players": 2,
            "dealer": 0,
            "winner": -1,
            "result": 0,
            "front": [12, 0],
            "back": [0, 0],
            "games": [0, 0],
            "pending": [0, 0],
            "undo": 1,
            "skunk_double": 0,
        },
    ),
    (
        b"! st r=23 t=121 n=2 d=0 w=0 x=2 f=121,70 b=119,65 g=1,0 q=0,0 u=13 x2=0\n",
        (
            "event",
            None,
            "st",
            {
                "r": "23",
                "t": "121",
                "n": "2",
                "d": "0",
                "w": "0",
                "x": "2",
                "f": "121,70",
                "b": "119,65",
                "g": "1,0",
                "q": "0,0",
                "u": "13",
                "x2": "0",
            },
            "",
            "",
        ),
        {
            "rev": 23,
            "target": 121,
            "players": 2,
            "dealer": 0,
            "winner": 0,
            "result": 2,
            "front": [121, 70],
            "back": [119, 65],
            "games": [1, 0],
            "pending": [0, 0],
            "undo": 13,
            "skunk_double": 0,
        },
    ),
    (
        b"! st r=17 t=121 n=3 d=0 w=-1 x=0 f=0,0,4 b=0,0,0 g=0,0,0 q=0,0,0 u=11 x2=0\n",
        (
            "event",
            None,
            "st",
            {
                "r": "17",
                "t": "121",
                "n": "3",
                "d": "0",
                "w": "-1",
                "x": "0",
                "f": "0,0,4",
                "b": "0,0,0",
                "g": "0,0,0",
                "q": "0,0,0",
                "u": "11",
                "x2": "0",
            },
            "",
            "",
        ),
        {
            "rev": 17,
            "target": 121,
            "players": 3,
            "dealer": 0,
            "winner": -1,
            "result": 0,
            "front": [0, 0, 4],
            "back": [0, 0, 0],
            "games": [0, 0, 0],
            "pending": [0, 0, 0],
            "undo": 11,
            "skunk_double": 0,
        },
    ),
    (
        b"! cfg bright=100 budget=500\n",
        ("event", None, "cfg", {"bright": "100", "budget": "500"}, "", ""),
        {},
    ),
    (
        b"#e1 err bad_points points must be 1..29\n",
        ("err", "e1", "", {}, "bad_points", "points must be 1..29"),
        {},
    ),
    (
        b"err bad_line not a request line\n",
        ("err", None, "", {}, "bad_line", "not a request line"),
        {},
    ),
    (b"err too_long line too long\n", ("err", None, "", {}, "too_long", "line too long"), {}),
    (
        b"#p1 err denied tap the deal button on the board to admit this device\n",
        ("err", "p1", "", {}, "denied", "tap the deal button on the board to admit this device"),
        {},
    ),
    (
        b"ok open=0 you=1 admitted=1\n",
        ("ok", None, "", {"open": "0", "you": "1", "admitted": "1"}, "", ""),
        {},
    ),
    (
        b"! admit open=1 you=0 admitted=0\n",
        ("event", None, "admit", {"open": "1", "you": "0", "admitted": "0"}, "", ""),
        {},
    ),
    # What a newer board might send: unknown fields, words and event kinds are ignored.
    (b"#5 ok r=7 zz=1 shiny\n", ("ok", "5", "", {"r": "7", "zz": "1"}, "", ""), {"rev": 7}),
    (
        b"! st r=9 f=3,4 zz=5\n",
        ("event", None, "st", {"r": "9", "f": "3,4", "zz": "5"}, "", ""),
        {"rev": 9, "front": [3, 4]},
    ),
    (b"! future k=1\n", ("event", None, "future", {"k": "1"}, "", ""), {}),
]

DECODE_REJECTS = [
    b"\n",
    b"!\n",
    b"! \n",
    b"#7\n",
    b"#7 err\n",
    b"OK\n",
    b"hello\n",
    b"#7 peg 0 12\n",  # a request is not a reply
]
