# HeadSplit: the two set-up commands.
#   make run    install missing Debian packages, build, run the app
#   make test   install missing Debian packages, build, run every test through CTest
#   make quick-test  the inner loop: build the app (no page), run the unit and CLI tests only
#   make package  build (and the page, which it ships), then $(BUILD_DIR)/headsplit_<version>_<arch>.deb
#   make tiny-model  retrain assets/tiny-gpt2 (the tiny-trained preset's model; about 42 min)
#   make web    the page: $(WEB_DIR)/site (index.html, sw.js, app.js, app.wasm, app.data, app.worker.js,
#               and the single-threaded app-single.js and app-single.wasm)
#   make serve-web  build the page and serve it on 127.0.0.1:$(WEB_PORT) with the headers it needs
# Packages are checked one by one with dpkg-query and only the missing ones are
# installed (apt-get, through sudo when not root).

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# WERROR=ON turns compiler warnings into errors (the CI does).
WERROR ?= OFF

# Build: compiler, CMake, engine libraries. GL: libepoxy and Mesa's EGL and llvmpipe, so
# compute shaders run headless. GUI: ImGui, GLFW, stb, DejaVu fonts; Xvfb and python3-xlib
# (a mouse and a window manager's close, for the settings test) for its tests.
# Tokenizer: ICU (Unicode classes and regex). Test: the PyTorch oracle; Node.js with npm for the
# GPT-2 tokenizer reference (npm installs it in the test); fortunes, the corpus of
# tools/train_tiny.py (its test trains a few steps); git (the commit-subject check and its
# test). The live lesson: libwebsockets, libqrencode, libssl-dev (OpenSSL's libcrypto makes
# its --https certificate); python3-websockets for its test's clients. Package: dpkg-dev
# (dpkg-shlibdeps, for CPack's Depends) and file (CPack's DEB generator runs it on the binaries
# before dpkg-shlibdeps; without it cpack stops). ccache: the native, sanitized and fuzzing
# builds compile through it (LAUNCH), so a clone rebuilds only what changed since any build.
DEB_PACKAGES := g++ cmake make pkg-config git \
  libxtensor-dev libxtensor-blas-dev libopenblas-dev \
  catch2 nlohmann-json3-dev libcli11-dev libicu-dev \
  libepoxy-dev libegl-dev libegl1 libegl-mesa0 libgl1-mesa-dri \
  libimgui-dev libglfw3-dev libstb-dev fonts-dejavu-core xvfb xauth python3-xlib \
  python3 python3-numpy python3-torch fortunes \
  clang libclang-rt-14-dev \
  libwebsockets-dev libqrencode-dev libssl-dev python3-websockets \
  dpkg-dev file ccache

# The page: Debian's emscripten (3.1.6; its system libraries come prebuilt), Eigen for the CPU
# backend's products in wasm, dpkg-dev for ImGui's source package (dpkg-source), Chromium for
# the page's tests and python3-websockets, their DevTools client; Node.js (emcc).
WEB_PACKAGES := emscripten libeigen3-dev dpkg-dev chromium fonts-dejavu-core python3 python3-websockets
WEB_DIR ?= build-web
WEB_PORT ?= 8000

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# The compiler launcher: ccache, with paths under this clone hashed relative to it (a fresh
# clone elsewhere reuses the objects of the last); LAUNCH= builds without it.
LAUNCH ?= env;CCACHE_BASEDIR=$(CURDIR);CCACHE_NOHASHDIR=true;ccache
LAUNCHER := -DCMAKE_C_COMPILER_LAUNCHER="$(LAUNCH)" -DCMAKE_CXX_COMPILER_LAUNCHER="$(LAUNCH)"

.PHONY: all deps web-deps build run test quick-test check package clean tiny-model web serve-web

all: build

deps: PACKAGES = $(DEB_PACKAGES)
web-deps: PACKAGES = $(WEB_PACKAGES)
deps web-deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	command -v node >/dev/null && command -v npm >/dev/null || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DHEADSPLIT_WERROR=$(WERROR) $(LAUNCHER)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The page: the same core/ and app/ code through emcmake; ImGui's sources from Debian's source
# package (tools/web/imgui_source.sh). emcc's JavaScript optimizer needs Debian's acorn
# (NODE_PATH). The site is assembled in a temporary folder and moved into place whole.
EMENV := NODE_PATH=/usr/share/nodejs
web: web-deps
	tools/web/imgui_source.sh $(abspath $(WEB_DIR))/imgui-src
	$(EMENV) emcmake cmake -S . -B $(WEB_DIR)/cmake -DCMAKE_BUILD_TYPE=Release -DHEADSPLIT_WERROR=$(WERROR) \
	  -DHEADSPLIT_IMGUI_SOURCE=$(abspath $(WEB_DIR))/imgui-src/imgui
	$(EMENV) cmake --build $(WEB_DIR)/cmake -j $(JOBS)
	$(EMENV) emcmake cmake -S . -B $(WEB_DIR)/cmake-single -DCMAKE_BUILD_TYPE=Release -DHEADSPLIT_WERROR=$(WERROR) \
	  -DHEADSPLIT_IMGUI_SOURCE=$(abspath $(WEB_DIR))/imgui-src/imgui -DHEADSPLIT_WEB_THREADS=OFF
	$(EMENV) cmake --build $(WEB_DIR)/cmake-single -j $(JOBS)
	@cmp -s $(WEB_DIR)/cmake/app/app.data $(WEB_DIR)/cmake-single/app/app-single.data || \
	  { echo "the two builds' app.data differ; the single-threaded page loads the threaded one's (index.html)"; exit 1; }
	rm -rf $(WEB_DIR)/site.new && mkdir -p $(WEB_DIR)/site.new
	cp app/web/index.html app/web/sw.js $(addprefix $(WEB_DIR)/cmake/app/app.,js wasm data worker.js) \
	  $(addprefix $(WEB_DIR)/cmake-single/app/app-single.,js wasm) $(WEB_DIR)/site.new/
	rm -rf $(WEB_DIR)/site && mv $(WEB_DIR)/site.new $(WEB_DIR)/site
	@echo "the page: $(WEB_DIR)/site ($$(du -sh $(WEB_DIR)/site | cut -f1); make serve-web serves it)"

serve-web: web
	python3 tools/web/serve.py $(WEB_DIR)/site --port $(WEB_PORT)

# The visualizer; with no display (ssh, CI) the headless trace instead.
run: build
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then ./$(BUILD_DIR)/app/headsplit; \
	else echo "no display: printing the trace instead (headsplit trace)"; ./$(BUILD_DIR)/app/headsplit trace; fi

# The page's tests (tests/web_test.sh) run here, once: make check does not build the page.
test: build web
	cmake -S . -B $(BUILD_DIR) -DHEADSPLIT_WEB_SITE=$(abspath $(WEB_DIR))/site
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# The inner loop: the native build only (no page), then the unit tests (headsplit_tests, CTest
# label unit) and the command-line test (cli); make test still runs everything.
quick-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L '^(unit|cli)$$'

# Reliability: the whole suite under AddressSanitizer + UndefinedBehaviorSanitizer, then
# the libFuzzer targets (clang) for FUZZ_SECONDS each on a copy of their seed corpus, JOBS at a
# time (tools/run_fuzz.sh; a fuzzer uses one core). A crash leaves its input in build-fuzz/
# (copy it to tests/fuzz/regressions/ as a test; a checkpoint one named checkpoint-crash-*, a
# quoting one quoting-crash-*, an address one address-crash-*, a settings one settings-crash-*).
FUZZ_SECONDS ?= 60
# Each target's seed corpus is tests/fuzz/NAME_corpus (the options': tests/fuzz/corpus).
FUZZ_TARGETS := options checkpoint quoting address settings lesson
SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
check: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEADSPLIT_SANITIZE=ON -DHEADSPLIT_WERROR=$(WERROR) $(LAUNCHER)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && $(SAN_ENV) ctest --output-on-failure -j $(JOBS)
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEADSPLIT_FUZZ=ON -DHEADSPLIT_WERROR=$(WERROR) $(LAUNCHER)
	cmake --build build-fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	tools/run_fuzz.sh build-fuzz $(FUZZ_SECONDS) $(JOBS) $(FUZZ_TARGETS)

# The Debian package (CPack): the executable, its desktop entry and icon; Depends names the
# shared libraries, Mesa's EGL and llvmpipe driver, and the DejaVu fonts.
package: build web
	cmake -S . -B $(BUILD_DIR) -DHEADSPLIT_WEB_SITE=$(abspath $(WEB_DIR))/site
	cmake --build $(BUILD_DIR) --target package

clean:
	rm -rf $(BUILD_DIR) build-asan build-fuzz $(WEB_DIR)

# The shipped tiny GPT-2: Debian's fortunes as the corpus, Debian's PyTorch on the CPU,
# seeded (tools/train_tiny.py says how; SEED and STEPS change it).
STEPS ?= 6000
SEED ?= 15
tiny-model: deps
	/usr/bin/python3 tools/train_tiny.py --out assets/tiny-gpt2 --steps $(STEPS) --seed $(SEED)
