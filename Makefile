# The README's two commands: `make run` and `make test`. Everything else is a convenience.
JOBS ?= $(shell nproc)
DLTUNE_ARGS ?= env

.PHONY: run test deps release debug asan test-asan bench format clean

run: deps release
	./build/release/dltune $(DLTUNE_ARGS)

# Every test of the release build (unit and integration), then the unit tests under ASan+UBSan.
test: deps release asan
	ctest --preset release -j$(JOBS)
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
