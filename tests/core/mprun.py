# Runs the test_* functions of core test modules under MicroPython; exit status 1 on any failure.
# Usage: micropython tests/core/mprun.py test_state [test_layout ...]
import sys


def run(module_name):
    module = __import__(module_name)
    failed = 0
    count = 0
    for name in sorted(dir(module)):
        if not name.startswith("test_"):
            continue
        count += 1
        try:
            getattr(module, name)()
            print("PASS", module_name, name)
        except Exception as err:  # report every failure, then carry on
            failed += 1
            print("FAIL", module_name, name, repr(err))
            sys.print_exception(err)
    return count, failed


total = 0
failures = 0
for module_name in sys.argv[1:]:
    count, failed = run(module_name)
    total += count
    failures += failed
print("%d passed, %d failed" % (total - failures, failures))
sys.exit(1 if failures or not total else 0)
