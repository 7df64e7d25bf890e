# Simulated `bluetooth` module for the virtual board (MicroPython unix port; never deployed).
#
# It follows the documented API of MicroPython's bluetooth.BLE (docs/library/bluetooth.rst) for a
# peripheral with a GATT server: active(), config('mac'/'gap_name'/'mtu'/...), irq(handler) with
# the documented event codes and data tuples, gatts_register_services(), gatts_read/write/notify/
# indicate, gatts_set_buffer(handle, len, append), gap_advertise(interval_us, adv_data, *,
# resp_data, connectable), gap_disconnect(). The radio is the launcher: the side channel
# (simlink.py) carries advertising, the GATT table and notifications out, and connections,
# writes, MTU exchanges and disconnections in. Events reach the IRQ handler the way the
# scheduler delivers them on a board: between two steps of the running program (here, when the
# firmware reads a pin or writes the LEDs, or, once the firmware watches a pin's edges, as the
# message comes: simlink.py), never in the middle of a Python statement of its own.
# Where the real stacks differ it behaves as NimBLE does (MicroPython's ESP32 stack): a central's
# connect stops advertising and the app starts it again; a notification the link cannot take now
# raises OSError(12). The firmware, finding no frozen `blestack` module off rp2, takes it for
# NimBLE (cribfw/stacklimits.py). The firmware on the real btstack and NimBLE modules is tested in
# tests/ble/test_ble_real.py and, through bleak and Chromium, tests/ble/test_ble*.py; this stand-in serves
# what they cannot (docs/virtual-board.md, "Why the simulated radio stays": the protocol model
# check's central, Bluetooth on any interpreter, a heap measured as a 32-bit board counts it).
#
# Side-channel messages (binary; u16 little-endian):
#   board -> launcher   b"bA" (not advertising) | b"bA" + u8 connectable + u8 len + adv + resp
#                       b"bG" + u16 preferred mtu + table text: "S:uuid:handle,C:uuid:flags:value
#                             handle,..." (uuids lower case, 16-bit ones in their 128-bit form)
#                       b"bN" + u16 conn + u16 value handle + data     (notification)
#                       b"bI" + u16 conn + u16 value handle + data     (indication)
#                       b"bK" + u16 conn                               (the board disconnects)
#   launcher -> board   b"bC" + u16 conn + u8 addr type + 6 address bytes   (a central connects)
#                       b"bW" + u16 conn + u16 handle + data                 (a central writes)
#                       b"bM" + u16 conn + u16 mtu                           (MTU exchanged)
#                       b"bX" + u16 conn                                     (disconnected)
import os
import struct

from simlink import link

FLAG_BROADCAST = 0x0001
FLAG_READ = 0x0002
FLAG_WRITE_NO_RESPONSE = 0x0004
FLAG_WRITE = 0x0008
FLAG_NOTIFY = 0x0010
FLAG_INDICATE = 0x0020
FLAG_AUTHENTICATED_SIGNED_WRITE = 0x0040
FLAG_AUX_WRITE = 0x0100
FLAG_READ_ENCRYPTED = 0x0200
FLAG_READ_AUTHENTICATED = 0x0400
FLAG_READ_AUTHORIZED = 0x0800
FLAG_WRITE_ENCRYPTED = 0x1000
FLAG_WRITE_AUTHENTICATED = 0x2000
FLAG_WRITE_AUTHORIZED = 0x4000

_IRQ_CENTRAL_CONNECT = 1
_IRQ_CENTRAL_DISCONNECT = 2
_IRQ_GATTS_WRITE = 3
_IRQ_GATTS_INDICATE_DONE = 20
_IRQ_MTU_EXCHANGED = 21

_DEFAULT_SIZE = 20  # a characteristic's value buffer, unless enlarged
_FIRST_HANDLE = 16  # handles below belong to the GAP and GATT services
_BASE_UUID = "-0000-1000-8000-00805f9b34fb"
_HEX = "0123456789abcdef"


class UUID:
    """A 16-bit or 128-bit UUID: from an int, a string, another UUID, or its little-endian
    bytes."""

    def __init__(self, value):
        if isinstance(value, UUID):
            self._value = value._value
        elif isinstance(value, int):
            if not 0 <= value <= 0xFFFF:
                raise ValueError("invalid UUID")
            self._value = value
        elif isinstance(value, str):
            digits = value.replace("-", "").lower()
            if len(digits) != 32:
                raise ValueError("invalid UUID")
            for c in digits:
                if c not in _HEX:
                    raise ValueError("invalid UUID")
            self._value = "%s-%s-%s-%s-%s" % (
                digits[0:8],
                digits[8:12],
                digits[12:16],
                digits[16:20],
                digits[20:32],
            )
        else:
            data = bytes(value)
            if len(data) == 2:
                self._value = data[0] | data[1] << 8
            elif len(data) == 16:
                self._value = UUID("".join("%02x" % b for b in reversed(data)))._value
            else:
                raise ValueError("invalid UUID")

    def text(self):
        """The 128-bit form, lower case (how BlueZ writes UUIDs)."""
        if isinstance(self._value, int):
            return "%08x" % self._value + _BASE_UUID
        return self._value

    def __eq__(self, other):
        return isinstance(other, UUID) and self._value == other._value

    def __hash__(self):
        return hash(self._value)

    def __repr__(self):
        if isinstance(self._value, int):
            return "UUID(0x%04x)" % self._value
        return "UUID('%s')" % self._value


def _address():
    text = os.getenv("CRIBBOARD_SIM_BLE_ADDR") or "C0:00:00:00:00:01"
    return bytes(int(part, 16) for part in text.split(":"))


class BLE:
    """The singleton radio: every BLE() is the same object."""

    _one = None
    # The IRQ handler runs inside the firmware's own calls (a pin read, an LED write, a flash
    # step, the task that waits for the launcher's messages: simlink.py), never from an interrupt or another thread: cribfw/blelink.py then
    # wakes its task with an asyncio.Event rather than a ThreadSafeFlag, which would keep the
    # unix port's poll from blocking.
    irq_in_task = True

    def __new__(cls):
        if BLE._one is None:
            ble = object.__new__(cls)
            ble._reset()
            BLE._one = ble
            link.ble = ble
        return BLE._one

    def _reset(self):
        self._active = False
        self._handler = None
        self._mac = _address()
        self._gap_name = "MPY BTSTACK"
        self._mtu = 23
        self._rxbuf = 256
        self._values = {}  # value handle -> bytearray
        self._sizes = {}  # value handle -> buffer size
        self._append = {}  # value handle -> append mode
        self._conns = {}  # conn handle -> [mtu, addr type, address]
        self._adv = b""
        self._resp = b""
        self._advertising = False

    # --- configuration ------------------------------------------------------------------------

    def active(self, active=None):
        if active is not None:
            self._active = bool(active)
            if not self._active:
                for conn in list(self._conns):
                    self.gap_disconnect(conn)
                self._stop_advertising()
        return self._active

    def config(self, *names, **settings):
        if names:
            if len(names) != 1 or settings:
                raise TypeError("query one value at a time")
            name = names[0]
            if name == "mac":
                self._need_active()
                return (1, self._mac)  # a random static address
            if name == "gap_name":
                return self._gap_name.encode()
            if name == "mtu":
                return self._mtu
            if name == "rxbuf":
                return self._rxbuf
            if name == "addr_mode":
                return 1
            raise ValueError("unknown config param")
        for name in settings:
            value = settings[name]
            if name == "gap_name":
                self._gap_name = value.decode() if isinstance(value, bytes) else str(value)
            elif name == "mtu":
                if not 23 <= value <= 517:
                    raise ValueError("invalid MTU")
                self._mtu = value
            elif name == "rxbuf":
                self._rxbuf = value
            elif name not in ("addr_mode", "bond", "mitm", "io", "le_secure"):
                raise ValueError("unknown config param")
        return None

    def irq(self, handler):
        self._handler = handler

    def _need_active(self):
        if not self._active:
            raise OSError(1)  # as on a board: the radio must be active

    # --- advertising ----------------------------------------------------------------------

    def gap_advertise(self, interval_us, adv_data=None, resp_data=None, connectable=True):
        self._need_active()
        if interval_us is None:
            self._stop_advertising()
            return
        if adv_data is not None:
            self._adv = bytes(adv_data)
        if resp_data is not None:
            self._resp = bytes(resp_data)
        if len(self._adv) > 31 or len(self._resp) > 31:
            raise OSError(22)  # EINVAL: a legacy advertisement holds 31 bytes
        self._advertising = True
        link.send_control(
            b"bA" + bytes((1 if connectable else 0, len(self._adv))) + self._adv + self._resp, b"bA"
        )

    def _stop_advertising(self):
        if self._advertising:
            self._advertising = False
            link.send_control(b"bA", b"bA")

    # --- GATT server ----------------------------------------------------------------------

    def gatts_register_services(self, services):
        self._need_active()
        if self._advertising:
            raise OSError(16)  # EBUSY: advertising must be stopped first
        self._values = {}
        self._sizes = {}
        self._append = {}
        table = []
        handle = _FIRST_HANDLE
        result = []
        for service in services:
            uuid, characteristics = service[0], service[1]
            table.append("S:%s:%d" % (uuid.text(), handle))
            handle += 1
            handles = []
            for characteristic in characteristics:
                c_uuid, flags = characteristic[0], characteristic[1]
                value = handle + 1  # after the characteristic declaration
                table.append("C:%s:%d:%d" % (c_uuid.text(), flags, value))
                self._values[value] = bytearray()
                self._sizes[value] = _DEFAULT_SIZE
                self._append[value] = False
                handles.append(value)
                handle = value + 1
                if flags & (FLAG_NOTIFY | FLAG_INDICATE):
                    handle += 1  # the client characteristic configuration descriptor
                descriptors = characteristic[2] if len(characteristic) > 2 else ()
                for d_uuid, d_flags in descriptors:
                    table.append("D:%s:%d:%d" % (d_uuid.text(), d_flags, handle))
                    self._values[handle] = bytearray()
                    self._sizes[handle] = _DEFAULT_SIZE
                    self._append[handle] = False
                    handles.append(handle)
                    handle += 1
            result.append(tuple(handles))
        link.send_control(b"bG" + struct.pack("<H", self._mtu) + ",".join(table).encode(), b"bG")
        return tuple(result)

    def _value(self, handle):
        if handle not in self._values:
            raise ValueError("invalid handle")
        return self._values[handle]

    def gatts_read(self, value_handle):
        value = self._value(value_handle)
        data = bytes(value)
        if self._append[value_handle]:
            value[:] = b""  # append mode: a read takes what was written
        return data

    def gatts_write(self, value_handle, data, send_update=False):
        value = self._value(value_handle)
        value[:] = bytes(data)
        if len(value) > self._sizes[value_handle]:
            self._sizes[value_handle] = len(value)  # a local write enlarges the buffer
        if send_update:
            for conn in self._conns:
                self.gatts_notify(conn, value_handle)

    def gatts_set_buffer(self, value_handle, size, append=False):
        self._value(value_handle)
        self._sizes[value_handle] = size
        self._append[value_handle] = bool(append)

    def gatts_notify(self, conn_handle, value_handle, data=None):
        self._send_value(b"bN", conn_handle, value_handle, data)

    def gatts_indicate(self, conn_handle, value_handle, data=None):
        self._send_value(b"bI", conn_handle, value_handle, data)
        self._irq(_IRQ_GATTS_INDICATE_DONE, (conn_handle, value_handle, 0))

    def _send_value(self, kind, conn_handle, value_handle, data):
        conn = self._conns.get(conn_handle)
        if conn is None:
            raise OSError(107)  # ENOTCONN
        payload = bytes(self._value(value_handle) if data is None else data)
        payload = payload[: conn[0] - 3]  # one ATT packet: MTU - 3 bytes
        if not link.send(kind + struct.pack("<HH", conn_handle, value_handle) + payload):
            raise OSError(12)  # ENOMEM: the stack's queue is full, try again later

    # --- connections ------------------------------------------------------------------------

    def gap_disconnect(self, conn_handle):
        if conn_handle not in self._conns:
            return False
        link.send_control(b"bK" + struct.pack("<H", conn_handle), None)
        return True  # _IRQ_CENTRAL_DISCONNECT follows when the radio confirms

    def gattc_exchange_mtu(self, conn_handle):
        raise OSError(95)  # EOPNOTSUPP: the central starts MTU exchanges on the virtual board

    # --- the radio (called by simlink when a message arrives) -----------------------------------

    def _radio(self, message):
        kind = message[1:2]
        if len(message) < 4:
            return
        conn = message[2] | message[3] << 8
        if kind == b"C" and len(message) == 11:
            address = bytes(message[5:11])
            self._conns[conn] = [23, message[4], address]
            self._advertising = False  # a peripheral stops advertising when a central connects
            self._irq(_IRQ_CENTRAL_CONNECT, (conn, message[4], memoryview(address)))
        elif kind == b"X":
            entry = self._conns.pop(conn, None)
            if entry is not None:
                self._irq(_IRQ_CENTRAL_DISCONNECT, (conn, entry[1], memoryview(entry[2])))
        elif kind == b"W" and len(message) >= 6 and conn in self._conns:
            handle = message[4] | message[5] << 8
            value = self._values.get(handle)
            if value is None:
                return
            data = bytes(message[6:])
            size = self._sizes[handle]
            if self._append[handle]:
                room = size - len(value)
                if room > 0:
                    value.extend(data[:room])
            else:
                value[:] = data[:size]
            self._irq(_IRQ_GATTS_WRITE, (conn, handle))
        elif kind == b"M" and len(message) == 6 and conn in self._conns:
            mtu = message[4] | message[5] << 8
            self._conns[conn][0] = mtu
            self._irq(_IRQ_MTU_EXCHANGED, (conn, mtu))

    def _irq(self, event, data):
        if self._handler is not None:
            self._handler(event, data)
