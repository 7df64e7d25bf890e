# Two commands do all the set-up on a fresh machine: `make run` and `make test`; `make check` is
# the fast tier while working (about a minute); `make help` lists the common targets.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two stamps, one venv: `make run` installs what the app needs (the project alone, editable);
# `make test` and the developer targets add the test extras and the MicroPython stubs on top.
# Either order works: the test stamp follows the app stamp, so a change to pyproject.toml
# reinstalls both in turn (as does a new version: the metadata of an editable install holds it).
APP_STAMP := $(VENV)/.installed-app
STAMP := $(VENV)/.installed

.PHONY: run test check help lint bench soak typecheck hardware clean

$(APP_STAMP): pyproject.toml firmware/cribfw/version.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(APP_STAMP)

$(STAMP): $(APP_STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(MAKE) --no-print-directory stubs
	touch $(STAMP)

run: $(APP_STAMP)
	$(BIN)/cribboard keep

# Two workers (pytest-xdist), a test file each at a time: most tests wait on a board, a broker
# or a browser, so two of them share 2 cores well; a file's tests stay together, with their
# module-wide fixtures.
test: lint typecheck browser dbus mosquitto stubs emulator a11y
	$(BIN)/python -m pytest -n 2 --dist loadfile

# The fast tier, an answer in about a minute beside the whole `make test`: lint, types, the core's
# tests on CPython, the cribbage rules, and the API's and client's tests that need no virtual
# board (tests/conftest.py marks every test that starts one `virtual_board`; those are left out).
# The core on MicroPython, the boards, Bluetooth, the hall and the page are `make test`'s.
CHECK_TESTS := tests/core tests/rules/test_rules*.py tests/host/test_api.py tests/host/test_mirror.py \
  tests/host/test_client.py tests/host/test_fake_transport.py tests/host/test_sharing.py \
  tests/host/test_waiting.py tests/docs/test_architecture.py
check: lint typecheck
	$(BIN)/python -m pytest -q -m "not virtual_board" $(CHECK_TESTS)

help:
	@echo "make run        the scorekeeper (sets up .venv with the app the first time)"
	@echo "make check      the fast tier, about a minute: lint, types, the core on CPython, the"
	@echo "                rules, the API and client tests that need no virtual board"
	@echo "make test       everything: lint, types and the whole suite, set-up targets first"
	@echo "make lint       ruff format --check and ruff check"
	@echo "make typecheck  mypy over the host"
	@echo "make bench      the benchmarks' figures (bench/run.py)"
	@echo "make soak       the long soak (bench/soak.py)"
	@echo "make catalogs   the translations brought up to date (docs/translating.md)"
	@echo "The Makefile's comments say more of each, and of the set-up targets."

# The formatter and linter (ruff, configured in pyproject.toml) over everything written in Python.
lint: $(STAMP)
	$(BIN)/ruff format --check --quiet host firmware tests bench examples hatch_build.py
	$(BIN)/ruff check --quiet host firmware tests bench examples hatch_build.py

bench: $(STAMP)
	$(BIN)/python bench/run.py

# The soak (not part of `make test`, about 80 minutes on 2 cores): the protocol model's state machine
# with many examples, a million fuzzed lines and 1,000+ power cuts on the virtual board, then power
# cuts and fuzzing on the emulated RP2040, then 300 Bluetooth centrals let go on stalled links per
# real stack (about 35 minutes); a summary table at the end, exit 1 on any violation.
# SOAK_ARGS passes options (bench/soak.py --help), e.g. SOAK_ARGS="--lines 100000".
soak: $(STAMP) emulator
	$(BIN)/python bench/soak.py $(SOAK_ARGS)

typecheck: $(STAMP)
	$(BIN)/mypy

# The drilling template, wiring diagrams, board picture and README tables in hardware/, from the
# firmware's layout and board profiles.
hardware: $(STAMP)
	$(BIN)/python -m cribboard.hardware

# firmware/web/, the table page as a board with Wi-Fi serves it (gzip-compressed; tests/page/
# test_board_page.py fails when stale), then firmware/package.json, the firmware's package for
# MicroPython's installer (mpremote mip install), from the file list deploy uses
# (tests/host/test_mip.py fails when stale).
.PHONY: mip
mip: $(STAMP)
	$(BIN)/python -m cribboard.bridge.boardpage
	$(BIN)/python -m cribboard.mip

# The README's pictures in docs/images/: the scorekeeper in a terminal and the bridge's page in
# headless Chromium, from a fresh virtual board (tests/page/test_screenshots.py fails when stale).
.PHONY: screenshots
screenshots: $(STAMP) browser
	$(BIN)/python -m cribdev.screenshots

clean:
	rm -rf $(VENV) build dist .pytest_cache host/cribboard/virtual/rp2/node_modules \
	  $(A11Y)/node_modules

# The MicroPython stubs the firmware's type check runs pyright against
# (tests/firmware/test_firmware_checks.py), for the MicroPython release the firmware targets. The rp2 and
# esp32 packages install files of the same names, so each gets a folder of its own in the venv.
STUBS_VERSION := 1.28
.PHONY: stubs
stubs:
	@for port in rp2 esp32; do \
	  dir=$(VENV)/micropython-stubs/$$port-$(STUBS_VERSION); \
	  if [ ! -e $$dir/machine.pyi ] && [ ! -d $$dir/machine ]; then \
	    rm -rf $$dir.partial && \
	    $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile \
	      --target $$dir.partial "micropython-$$port-stubs==$(STUBS_VERSION).*" && \
	    rm -rf $$dir && mv $$dir.partial $$dir || exit 1; \
	  fi; \
	done

# Debian's headless Chromium and curl, for the bridge's browser and example tests
# (tests/page/test_bridge_browser.py, tests/page/test_bridge_examples.py). Installed with apt-get when
# missing and the user is root; otherwise it says what to install (those tests skip, saying so).
.PHONY: browser
browser:
	@if [ ! -x /usr/bin/chromium ] || ! command -v curl >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium curl; \
	  else \
	    echo "make browser: the browser tests need Debian's chromium and curl:" \
	      "sudo apt-get install chromium curl"; \
	  fi; \
	fi

# Debian's dbus (dbus-daemon), for the Bluetooth LE tests: a private bus with a fake BlueZ that
# unmodified bleak reaches (tests/ble/test_ble*.py). Installed with apt-get when missing and the user
# is root; otherwise it says what to install (those tests skip, saying so).
.PHONY: dbus
dbus:
	@if ! command -v dbus-daemon >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dbus; \
	  else \
	    echo "make dbus: the Bluetooth LE tests need Debian's dbus: sudo apt-get install dbus"; \
	  fi; \
	fi

# Debian's mosquitto (the MQTT broker and mosquitto_passwd), for the club hall's tests
# (tests/hall/test_hall_broker.py): each starts a private broker on a free port. Installed with apt-get
# when missing and the user is root; otherwise it says what to install (those tests skip, saying
# so). The hall never uses the system service the package sets up on port 1883.
.PHONY: mosquitto
mosquitto:
	@if ! command -v mosquitto >/dev/null && [ ! -x /usr/sbin/mosquitto ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto; \
	  else \
	    echo "make mosquitto: the club hall's tests need Debian's mosquitto:" \
	      "sudo apt-get install mosquitto"; \
	  fi; \
	fi

# The rp2 firmware images in firmware/ports/rp2/images/ (MicroPython v1.28.0, stock and with the
# firmware frozen in), rebuilt from source with their provenance files. A developer target, never
# part of `make test`: RP2_SOURCES names the directory holding the bare git repositories of
# MicroPython and its pinned libraries (firmware/ports/rp2/README.md); nothing is downloaded.
# RP2_IMAGES limits the build to some images (names as in that README).
.PHONY: rp2-images rp2-toolchain
rp2-images: rp2-toolchain
	@if [ -z "$(RP2_SOURCES)" ]; then \
	  echo "make rp2-images: name the source repositories: make rp2-images RP2_SOURCES=DIR" \
	    "(see firmware/ports/rp2/README.md)" >&2; exit 2; \
	fi
	$(PYTHON) firmware/ports/rp2/build.py --sources "$(RP2_SOURCES)" \
	  $(if $(RP2_IMAGES),--images $(RP2_IMAGES))

# Debian's Arm cross toolchain, CMake and host compilers for rp2-images. Installed with apt-get
# when missing and the user is root; otherwise it says what to install.
rp2-toolchain:
	@if ! command -v arm-none-eabi-gcc >/dev/null || ! command -v cmake >/dev/null \
	    || ! command -v gcc >/dev/null || [ ! -f /usr/lib/arm-none-eabi/newlib/libc.a ] \
	    || [ ! -f /usr/lib/arm-none-eabi/newlib/libstdc++.a ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib cmake \
	      build-essential; \
	  else \
	    echo "make rp2-toolchain: install gcc-arm-none-eabi libnewlib-arm-none-eabi" \
	      "libstdc++-arm-none-eabi-newlib cmake build-essential (sudo apt-get install ...)"; \
	  fi; \
	fi

# Node.js, npm and the RP2040 emulator (rp2040js, pinned by host/cribboard/virtual/rp2/
# package-lock.json) for the emulated-board tests (tests/rp2/test_rp2_emulator.py): Debian's nodejs
# and npm with apt-get when node is missing and the user is root (otherwise it says what to
# install, and those tests skip, saying so); then `npm ci` when node_modules is missing or older
# than the lock file. Nothing is downloaded at test time.
EMULATOR := host/cribboard/virtual/rp2
.PHONY: emulator
emulator:
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; \
	  else \
	    echo "make emulator: the emulated-board tests need Node.js and npm:" \
	      "sudo apt-get install nodejs npm, then make emulator"; \
	  fi; \
	fi
	@if command -v npm >/dev/null && { [ ! -f $(EMULATOR)/node_modules/.package-lock.json ] || \
	    [ $(EMULATOR)/package-lock.json -nt $(EMULATOR)/node_modules/.package-lock.json ]; }; then \
	  cd $(EMULATOR) && npm ci --no-audit --no-fund --loglevel=error; \
	fi

# axe-core, the accessibility engine the page tests run in headless Chromium
# (tests/page/test_accessibility.py), pinned by tests/a11y/package-lock.json: `npm ci` when
# node_modules is missing or older than the lock file (Node.js and npm: `make emulator`).
A11Y := tests/a11y
.PHONY: a11y
a11y: emulator
	@if command -v npm >/dev/null && { [ ! -f $(A11Y)/node_modules/.package-lock.json ] || \
	    [ $(A11Y)/package-lock.json -nt $(A11Y)/node_modules/.package-lock.json ]; }; then \
	  cd $(A11Y) && npm ci --no-audit --no-fund --loglevel=error; \
	fi

# The translations (docs/translating.md): the messages of the host's Python and the page's
# JavaScript extracted into host/cribboard/locale/cribboard.pot, each language's .po brought up
# to date with it (new messages empty, changed ones marked fuzzy for the translator), then every
# .po compiled to the .mo the program reads. The .mo files are committed, so a fresh clone and
# an installed package speak every language; tests/docs/test_l10n.py fails when one is stale.
LOCALE := host/cribboard/locale
.PHONY: catalogs
catalogs: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg --no-default-keywords \
	  -k _ -k n_:1,2 -k N_ -k L_ -c Translators: --add-location=file --sort-by-file \
	  --project=cribboard --copyright-holder="the cribboard authors" --no-wrap \
	  -o $(LOCALE)/cribboard.pot .
	$(BIN)/pybabel update -D cribboard -i $(LOCALE)/cribboard.pot -d $(LOCALE) \
	  --ignore-obsolete --no-wrap
	$(BIN)/pybabel compile --statistics -D cribboard -d $(LOCALE)
