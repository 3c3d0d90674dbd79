# ticksentry: the two set-up commands (run as root on a fresh Debian 12 machine).
#   make demo  - install packages, build, run the simulator live with the dashboard at
#                http://127.0.0.1:8080 until Ctrl-C (DEMO_SECONDS=20 make demo stops after 20 s)
#   make test  - install packages, build, run every test through ctest
#   make sanitize - every test under ASan+UBSan, the concurrency tests under TSan (bench/sanitize.sh)
#   make train - retrain the shipped default model end to end (LOBSTER export → train → ONNX)
#   make model - the release from the data: exports → study (every model and baseline, both
#                tasks, intervals) → report, events, gate → registry → model card (models/REPORT.md)
# train, model and model-data read the sample data (never part of the repository) from
# $(TICKSENTRY_DATA_DIR): the environment variable, else ../shared/data beside the clone.
PRESET ?= release
BUILD_DIR := build/$(PRESET)
DEMO_SECONDS ?= 0
DEMO_TOKEN ?= demo
# Each demo run keeps its alerts and audit store in a fresh folder (a run never appends to an
# earlier run's files unless told to with --append).
DEMO_OUT ?= demo-runs/$(shell date +%Y%m%d-%H%M%S)

# Debian packages the build and tests need (apt-get is skipped when all are present).
DEB_PACKAGES := build-essential cmake ninja-build ccache pkg-config git zlib1g-dev \
  libspdlog-dev libfmt-dev libtomlplusplus-dev libcli11-dev prometheus-cpp-dev \
  nlohmann-json3-dev libsqlite3-dev sqlite3 libgtest-dev libgmock-dev libbenchmark-dev \
  libonnx-dev libprotobuf-dev protobuf-compiler libdnnl-dev \
  python3-torch python3-onnx python3-numpy libopenblas0-pthread \
  python3-sklearn python3-matplotlib libcpp-httplib-dev chromium fonts-wqy-microhei \
  librdkafka-dev libsimdjson-dev libpq-dev postgresql kcat libboost-dev \
  libcurl4-openssl-dev libssl-dev python3-aiosmtpd openssl tzdata \
  libhowardhinnant-date-dev libdeflate-dev

.PHONY: deps build demo test sanitize bench clean ticksentry train model model-data model-report web

deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	command -v npm >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# The dashboard (web/: TypeScript, Vite, lightweight-charts; playwright-core for its e2e test):
# npm ci from the committed lock file, then vite build into web/dist, which ticksentry serves.
WEB_SOURCES := web/index.html web/vite.config.ts web/tsconfig.json $(wildcard web/src/*.ts web/src/*/*.ts web/src/*.css)
web/node_modules/.package-lock.json: web/package-lock.json | deps
	cd web && npm ci --no-audit --no-fund
web/dist/index.html: web/node_modules/.package-lock.json $(WEB_SOURCES)
	cd web && npm run build
web: web/dist/index.html

build: deps web
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET)

demo: build
	@echo "dashboard: http://127.0.0.1:8080/?token=$(DEMO_TOKEN)  (Ctrl-C stops the demo)"
	$(BUILD_DIR)/src/app/ticksentry run --duration $(DEMO_SECONDS) --http 127.0.0.1:8080 --http-token $(DEMO_TOKEN) --out-dir $(DEMO_OUT)

test: build
	ctest --preset $(PRESET)

# ASan+UBSan build (the asan preset) and every test; then the tsan preset's concurrency tests.
# Summary: bench/results/sanitize-<machine>-<date>.json. Takes long: a second full build.
sanitize: deps web
	bench/sanitize.sh

bench: build
	bench/run_all.sh $(BUILD_DIR)

# --- models (models/MODEL_CARD.md) -------------------------------------------------------------
PY := /usr/bin/python3
TS_BIN := $(BUILD_DIR)/src/app/ticksentry
MODELS_DATA ?= build/models-data
MODELS_WORK ?= build/models-train
SIM_SECONDS ?= 7200
TICKSENTRY_DATA_DIR ?= ../shared/data
LOBSTER := $(TICKSENTRY_DATA_DIR)/lobster
SSE_DAY := $(TICKSENTRY_DATA_DIR)/sse-l2/600519-20230201

# Only the CLI (features, build, infer, eval, bench); BUILD_DIR=build/<name> for a private tree.
ticksentry: deps
	cmake --preset $(PRESET) -B $(BUILD_DIR)
	nice cmake --build $(BUILD_DIR) --target ticksentry

# The default model's data: LOBSTER NASDAQ 2012-06-21, AAPL + AMZN + GOOG (real data, read in
# place from $(TICKSENTRY_DATA_DIR)); trained on the first 70 % of the day, early-stopped on the next 15 %,
# tested (and gated) on the last 15 %. See models/MODEL_CARD.md.
$(MODELS_DATA)/lobster/manifest.json: | ticksentry
	$(TS_BIN) features --export $(MODELS_DATA)/lobster --format lobster \
	  $(LOBSTER)/AAPL*message* $(LOBSTER)/AMZN*message* $(LOBSTER)/GOOG*message*

$(MODELS_DATA)/sim/manifest.json: | ticksentry
	$(TS_BIN) features --export $(MODELS_DATA)/sim --format sim --sim-seconds $(SIM_SECONDS)

train: $(MODELS_DATA)/lobster/manifest.json
	nice $(PY) models/pipeline.py --data $(MODELS_DATA)/lobster --work $(MODELS_WORK) \
	  --until export --ticksentry $(TS_BIN)
	@echo "sha256 of the retrained and the shipped model:"; \
	  sha256sum $(MODELS_WORK)/model.onnx models/default.onnx
	@echo "to ship it: cp $(MODELS_WORK)/model.onnx models/default.onnx (and update models/MODEL_CARD.md)"

# Every export the report uses: the data sets of models/configs/datasets.toml, read in place from
# $(TICKSENTRY_DATA_DIR) (one without its files, or whose reader this build lacks, is reported
# and left out; a new data set plugs in with one block there).
model-data: | ticksentry
	$(PY) models/datasets.py export --data $(TICKSENTRY_DATA_DIR) --out $(MODELS_DATA) \
	  --ticksentry $(TS_BIN)

# make model: the release, end to end from the data (docs/labels.md): the exports
# (model-data), the protocol study (models/study.py: GRU, LSTM, Transformer, TCN and every
# baseline trained on the pooled train splits; both tasks, detect and forecast, as one process
# each (one per core); pooled test split, held-out symbols (the last symbol of each market's
# multi-symbol export), leave one market out; block-bootstrap intervals; per market, data set and
# symbol; the promotion gate per task against the registry's prod version), docs/events.md
# (every labelled event), models/REPORT.md + report.json, the default decision recorded in the
# registry (models/release.py: prod changes only where the gate passed and the test rows
# confirmed), the prod version's per-market operating points (models/market_ops.py: fitted on
# validation, written into the registry, the report regenerated with them), models/MODEL_CARD.md,
# and a summary in bench/results/detection-study-DATE.json (machine, commit, date, decisions, goal).
# Knobs, for a quick check of the pipeline on a busy machine (the report states what ran):
#   STUDY_CONFIG=models/configs/study_quick.toml (fewer epochs and windows), STUDY_REPS=30,
#   STUDY_EVALUATIONS=pooled (or pooled,held_out_symbols,lomo:bitstamp ...).
HOLD_OUT := --hold-out-symbol lobster:GOOG --hold-out-symbol sse:600761.SH \
	  --hold-out-symbol szse:000400.SZ
STUDY_CONFIG ?= models/configs/study.toml
STUDY_REPS ?= 100
STUDY_EVALUATIONS ?= pooled,held_out_symbols,lomo
STUDY_DIR ?= build/models-study
STUDY := nice -n 10 $(PY) models/study.py --datasets models/configs/datasets.toml \
	  --exports $(MODELS_DATA) $(HOLD_OUT) --registry models/registry.json \
	  --release-dir $(STUDY_DIR)/release --config $(STUDY_CONFIG) --reps $(STUDY_REPS) \
	  --evaluations $(STUDY_EVALUATIONS)
REPORT := $(PY) models/report.py --study $(STUDY_DIR)/detect/study.json \
	  --study $(STUDY_DIR)/forecast/study.json --out models
model: model-data
	rm -rf $(STUDY_DIR)
	$(STUDY) --task detect --work $(STUDY_DIR)/detect > $(STUDY_DIR).detect.log 2>&1 & d=$$!; \
	$(STUDY) --task forecast --work $(STUDY_DIR)/forecast > $(STUDY_DIR).forecast.log 2>&1 & f=$$!; \
	wait $$d; a=$$?; wait $$f; b=$$?; tail -n 5 $(STUDY_DIR).detect.log $(STUDY_DIR).forecast.log; \
	test $$a -eq 0 -a $$b -eq 0
	$(PY) models/events.py --datasets models/configs/datasets.toml --exports $(MODELS_DATA) \
	  --out docs/events.md
	$(REPORT)
	$(PY) models/release.py record --release-dir $(STUDY_DIR)/release \
	  --registry models/registry.json --report models/report.json --ticksentry $(TS_BIN)
	$(PY) models/market_ops.py --exports $(MODELS_DATA) --registry models/registry.json \
	  --ticksentry $(TS_BIN) --write --out $(STUDY_DIR)/market_ops.json
	$(REPORT) --market-ops $(STUDY_DIR)/market_ops.json \
	  --bench bench/results/detection-study-$(shell date -u +%Y%m%d-%H%M).json
	$(PY) models/model_card.py --report models/report.json --registry models/registry.json \
	  --out models/MODEL_CARD.md
model-report: model

clean:
	rm -rf build
