# HeadSplit: the two set-up commands.
#   make run    install missing Debian packages, build, run the app
#   make test   install missing Debian packages, build, run every test through CTest
# Packages are checked one by one with dpkg-query and only the missing ones are
# installed (apt-get, through sudo when not root).

BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# Build: compiler, CMake, engine libraries. GL: libepoxy and Mesa's EGL and llvmpipe, so
# compute shaders run headless. GUI: ImGui, GLFW, stb, DejaVu fonts; Xvfb for its tests.
# Test: the PyTorch oracle.
DEB_PACKAGES := g++ cmake make pkg-config \
  libxtensor-dev libxtensor-blas-dev libopenblas-dev \
  catch2 nlohmann-json3-dev libcli11-dev \
  libepoxy-dev libegl-dev libegl1 libegl-mesa0 libgl1-mesa-dri \
  libimgui-dev libglfw3-dev libstb-dev fonts-dejavu-core xvfb xauth \
  python3 python3-numpy python3-torch

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build run test clean

all: build

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The visualizer; with no display (ssh, CI) the headless trace instead.
run: build
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then ./$(BUILD_DIR)/app/headsplit; \
	else echo "no display: printing the trace instead (headsplit trace)"; ./$(BUILD_DIR)/app/headsplit trace; fi

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)
