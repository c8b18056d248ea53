# The README's two commands: `make run` and `make test`. Everything else is a convenience.
JOBS ?= $(shell nproc)
DLTUNE_ARGS ?= check

.PHONY: run test deps release debug asan test-asan bench format clean

# `dltune check` exits 1 for warnings and 2 for critical findings: that is its report, not a
# failure of `make run`, which fails only when dltune could not run at all.
run: deps release
	@./build/release/dltune $(DLTUNE_ARGS); rc=$$?; \
	if [ $$rc -eq 1 ] || [ $$rc -eq 2 ]; then echo "(dltune exited $$rc: 1 = warnings, 2 = critical findings or bad input)"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi

# Every test of the release build (unit tests in parallel; integration tests one at a time,
# since some change this host's settings for a moment and others read them), then the unit
# tests under ASan+UBSan (the asan build preset builds only what they need: dltune_unit, the
# dltune binary and the fake NVML libraries).
test: deps release asan
	ctest --preset release -L unit -j$(JOBS)
	ctest --preset release -L integration
	ctest --preset asan -L unit -j$(JOBS)

deps:
	./scripts/install-deps

release:
	cmake --preset release >/dev/null
	cmake --build --preset release -j$(JOBS)

debug:
	cmake --preset debug >/dev/null
	cmake --build --preset debug -j$(JOBS)

asan:
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j$(JOBS)

bench: deps
	cmake --preset bench >/dev/null
	cmake --build --preset bench -j$(JOBS)
	./bench/run-env-bench

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build
