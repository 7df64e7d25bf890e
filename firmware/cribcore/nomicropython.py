# What CPython needs of MicroPython's `micropython` module for the firmware's source to run there
# (the host package, the tests): each module that compiles a function to machine code imports
#     try:
#         import micropython
#     except ImportError:  # CPython
#         from cribcore import nomicropython as micropython
# MicroPython's compiler reads `@micropython.native` and `@micropython.viper` itself (it never
# looks the name up), so on a board this module is never imported. Where a board has no native
# emitter, the build leaves the decorators out (host/cribboard/firmware_build.py): a viper
# function's source is then its own plain twin (cribcore/twins.py).


def native(function):
    """MicroPython compiles the function to machine code; CPython runs it as it is."""
    return function


def viper(function):
    """MicroPython compiles the function to machine code with machine-word integers and raw
    buffer pointers; CPython runs it as it is (its plain twin)."""
    return function
