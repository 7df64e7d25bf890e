# What the firmware takes from MicroPython's `micropython` module, for CPython (the host and the
# tests run the same core): the decorators that choose a native emitter leave a function as it is
# (its plain twin), and const is the value itself.


def const(value):
    return value


def native(function):
    return function


def viper(function):
    return function
