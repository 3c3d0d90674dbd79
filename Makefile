# ticksentry: the two set-up commands (run as root on a fresh Debian 12 machine).
#   make demo  - install packages, build, run the main job on its embedded default
#   make test  - install packages, build, run every test through ctest
PRESET ?= release
BUILD_DIR := build/$(PRESET)
DEMO_SECONDS ?= 20

# Debian packages the build and tests need (apt-get is skipped when all are present).
DEB_PACKAGES := build-essential cmake ninja-build pkg-config git zlib1g-dev \
  libspdlog-dev libfmt-dev libtomlplusplus-dev libcli11-dev prometheus-cpp-dev \
  nlohmann-json3-dev libsqlite3-dev sqlite3 libgtest-dev libgmock-dev libbenchmark-dev \
  libonnx-dev libprotobuf-dev protobuf-compiler libdnnl-dev \
  python3-torch python3-onnx python3-numpy libopenblas0-pthread

.PHONY: deps build demo test bench clean

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

build: deps
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET)

demo: build
	$(BUILD_DIR)/src/app/ticksentry run --duration $(DEMO_SECONDS)

test: build
	ctest --preset $(PRESET)

bench: build
	bench/run_all.sh $(BUILD_DIR)

clean:
	rm -rf build
