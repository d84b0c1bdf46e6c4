PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck layers unit bench bench-fgd bench-compare fuzz clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/berth simulate examples/quickstart/ -o table

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy --strict src/berth

layers: $(STAMP)
	$(BIN)/lint-imports

unit: $(STAMP)
	$(BIN)/pytest -n auto --dist loadfile

test: lint typecheck layers unit

bench: $(STAMP)
	$(BIN)/python benchmarks/scheduling_basic.py
	$(BIN)/python benchmarks/scheduling_reservations.py
	$(BIN)/python benchmarks/gang_scheduling.py
	$(BIN)/python benchmarks/preemption_async.py
	$(BIN)/python benchmarks/quota_contention.py
	$(BIN)/python benchmarks/scheduler_perf.py
	$(BIN)/python benchmarks/descheduler_cycle.py
	$(BIN)/python benchmarks/crash_journal.py
	$(BIN)/python benchmarks/serve_crash.py
	$(BIN)/python benchmarks/managed_fields.py
	$(BIN)/python benchmarks/serve_load.py
	$(BIN)/python benchmarks/end_to_end.py
	$(BIN)/python benchmarks/live_binding.py

bench-fgd: $(STAMP)
	$(BIN)/python benchmarks/fgd.py

bench-compare: $(STAMP)
	$(BIN)/python benchmarks/compare_sweep.py

fuzz: $(STAMP)
	$(BIN)/python benchmarks/fuzz.py --scenarios 10000 --workers 2

clean:
	rm -rf $(VENV)
