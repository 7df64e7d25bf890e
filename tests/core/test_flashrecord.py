# The record primitive every flash record shares (cribfw/flashrecord.py): magic and version, the
# crc32 seal, the atomic file write. Under CPython (pytest) and MicroPython (mprun.py, on a real
# littlefs).
import os

from test_store import exists, with_root

from cribfw.flashrecord import blank, crc, read, replace, seal, sealed, version, write


def sealed_record():
    rec = blank(b"TEST", 3, 9)
    rec[5:9] = b"abcd"
    seal(rec)
    return rec


def test_a_record_is_magic_version_fields_and_a_crc32_of_them_little_endian():
    rec = sealed_record()
    assert bytes(rec[:9]) == b"TEST\x03abcd" and len(rec) == 13
    assert int.from_bytes(rec[9:], "little") == crc(rec, 9)
    assert crc(rec, 9, 5) == crc(b"abcd", 4)
    assert sealed(rec, 9) and version(rec, b"TEST", 9) == 3


def test_damage_anywhere_breaks_the_seal():
    rec = sealed_record()
    for at in range(len(rec)):
        bad = bytearray(rec)
        bad[at] ^= 0x10
        assert not sealed(bad, 9), at
    assert not sealed(rec[:-1], 8) and not sealed(rec + b"\0", 9)
    assert not sealed(rec, 8) and not sealed(b"", 0)


def test_another_magic_or_too_few_bytes_has_no_version():
    rec = sealed_record()
    assert version(rec, b"CRIB", 9) == -1
    assert version(rec, b"TEST", 14) == -1
    assert version(b"", b"TEST", 5) == -1


def test_a_replaced_file_holds_the_new_record_and_no_temporary_file_is_left():
    def run(root):
        path = root + "/rec.dat"
        assert read(path, 100) is None
        write(path, b"old")
        replace(path, sealed_record())
        assert read(path, 100) == bytes(sealed_record())
        assert read(path, 4) == b"TEST"  # at most the bytes asked for
        assert not exists(path + ".tmp")
        os.remove(path)

    with_root(run)
