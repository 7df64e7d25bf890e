# The club hall's MQTT topic scheme v1 (docs/mqtt.md), the part a table shares with the host: the
# range of table numbers, a table's topics and broker user, how a table publishes on each topic,
# and the limits of a command. The host's cribboard.hallwire.topics and cribboard.hallwire.messages
# build on these; a Wi-Fi board's own table client (cribfw/hall.py) uses them as they are. Runs on
# MicroPython and CPython. Each name here costs a board in a hall RAM: a format string, not a
# function, where one does.

ROOT = "cribboard"
VERSION = "v1"

MAX_TABLES = 999  # a hall's tables are numbered 1..MAX_TABLES
TABLE_USER = "table-%d"  # table N's broker user and client id: TABLE_USER % N

# A table's topics: cribboard/v1/<hall>/table/<N>/<leaf>.
STATE = "state"  # the board's state, retained, QoS 0
EVENT = "event"  # the board's state after each change, QoS 1
ONLINE = "online"  # "1" / "0" (the Last Will), retained, QoS 1
CMD = "cmd"  # director -> table, QoS 1
ACK = "ack"  # table -> director, QoS 1
# (QoS, retained) of each, in the order above.
STATE_DELIVERY = (0, True)
EVENT_DELIVERY = (1, False)
ONLINE_DELIVERY = (1, True)
CMD_DELIVERY = (1, False)
ACK_DELIVERY = (1, False)

ONLINE_PAYLOAD = b"1"
OFFLINE_PAYLOAD = b"0"

NEW_GAME = "new"  # the only command op in v1
MAX_COMMAND_BYTES = 256  # a board's receive buffer for cmd
MAX_NAME_CHARS = 24  # a player's name in a command (longer names are cut)
MAX_COMMAND_ID = 16  # a command id: 1 to 16 of A-Z a-z 0-9 _ . -


def is_command_id(text):
    """Whether `text` (a str) is a usable command id."""
    if not 1 <= len(text) <= MAX_COMMAND_ID:
        return False
    for c in text:
        if not ("a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9" or c in "_.-"):
            return False
    return True


def table_prefix(hall, table):
    """``cribboard/v1/<hall>/table/<N>/``: a table's topics are this plus a leaf. `table` is
    the table's number, or ``+`` (any table) in a subscription filter."""
    return "%s/%s/%s/table/%s/" % (ROOT, VERSION, hall, table)
