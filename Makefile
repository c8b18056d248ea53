# The README's two commands: `make run` and `make test`. Everything else is a convenience.
JOBS ?= $(shell nproc)
DLTUNE_ARGS ?= check

# The presets build with Ninja. A build directory that an older checkout made with Unix Makefiles
# cannot be configured for Ninja: it is removed (its objects with it) and configured anew.
define configure
	@if [ -f build/$(1)/CMakeCache.txt ] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' build/$(1)/CMakeCache.txt; then \
	  echo "build/$(1) was made for another generator: removing it"; rm -rf build/$(1); fi
	cmake --preset $(1) $(2) >/dev/null
endef

.PHONY: run test test-release unit-release deps deps-run release debug asan bench fuzz fuzz-build format clean deb cpack-deb

# `dltune check` exits 1 for warnings and 2 for critical findings: that is its report, not a
# failure of `make run`, which fails only when dltune could not run at all.
# `make run` installs what building and running need, not the test tools, and builds without the
# tests (GoogleTest is a test tool).
run: deps-run
	$(call configure,release,-DDLTUNE_TESTS=OFF)
	cmake --build --preset release -j$(JOBS) --target dltune
	@./tools/check-hardening build/release/dltune
	@./build/release/dltune $(DLTUNE_ARGS); rc=$$?; \
	if [ $$rc -eq 1 ] || [ $$rc -eq 2 ]; then echo "(dltune exited $$rc: 1 = warnings, 2 = critical findings or bad input)"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi

# Every test, once, under ASan+UBSan+LeakSanitizer (the asan preset; every dltune the
# integration tests start is instrumented too): the unit tests in parallel (as shards of the
# unit binary: `ctest --preset asan -L unit` runs them one process each), then the integration
# tests one at a time (some change this host's settings for a moment and others read them),
# those that need a quiet host (label integration-quiet: profile, bench) last; then each fuzz
# target for CI_FUZZ_SECONDS on its seed corpus. The fuzz targets build in the background at
# idle priority meanwhile (tests/run-tests). `make test-release`: the same tests on the release
# build.
CI_FUZZ_SECONDS ?= 5
test: deps
	./tools/check-layering
	$(call configure,asan)
	$(call configure,fuzz)
	cmake --build --preset asan-all -j$(JOBS)
	JOBS=$(JOBS) CI_FUZZ_SECONDS=$(CI_FUZZ_SECONDS) ./tests/run-tests

test-release: deps
	$(call configure,release,-DDLTUNE_TESTS=ON)
	cmake --build --preset release -j$(JOBS)
	ctest --preset release -L shards -j$(JOBS)
	ctest --preset release -L integration

unit-release: deps
	$(call configure,release,-DDLTUNE_TESTS=ON)
	cmake --build --preset release -j$(JOBS) --target dltune_unit
	ctest --preset release -L shards -j$(JOBS)

deps:
	./scripts/install-deps

deps-run:
	./scripts/install-deps runtime build

# The Debian package as Debian builds them: dpkg-buildpackage with debian/ (dh, its cmake build
# system with Ninja, hardening=+all from dpkg-buildflags, a -dbgsym package of the debug
# symbols), then lintian on the result. The packages land in build/deb/. `make cpack-deb` is the
# quicker package of a release build by cpack (what the install test checks offline).
deb:
	./scripts/install-deps runtime build package
	dpkg-buildpackage -b -us -uc -j$(JOBS)
	./tools/check-hardening debian/dltune/usr/bin/dltune
	mkdir -p build/deb
	mv ../dltune_*.deb ../dltune-dbgsym_*.deb ../dltune_*.buildinfo ../dltune_*.changes build/deb/
	lintian --fail-on error,warning build/deb/dltune_*.changes

cpack-deb: deps-run
	cmake -S . -B build/cpack-deb -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
	  -DCMAKE_INSTALL_PREFIX=/usr -DDLTUNE_TESTS=OFF -DDLTUNE_TEST_HOOKS=OFF >/dev/null
	cmake --build build/cpack-deb -j$(JOBS)
	./tools/check-hardening build/cpack-deb/dltune
	cd build/cpack-deb && cpack -G DEB

release:
	$(call configure,release,-DDLTUNE_TESTS=ON)
	cmake --build --preset release -j$(JOBS)
	./tools/check-hardening build/release/dltune

debug:
	$(call configure,debug)
	cmake --build --preset debug -j$(JOBS)

asan:
	$(call configure,asan)
	cmake --build --preset asan -j$(JOBS)

# The libFuzzer targets (tests/fuzz, clang with ASan and UBSan), each run for FUZZ_SECONDS on a
# corpus seeded from the fixture roots, this host's files and the repository's TOML; what they
# find is kept in build/fuzz/artifacts. `make test` runs them briefly (CI_FUZZ_SECONDS).
FUZZ_SECONDS ?= 600
fuzz: deps fuzz-build
	./tests/fuzz/run-fuzzers --seconds $(FUZZ_SECONDS)

fuzz-build:
	$(call configure,fuzz)
	cmake --build --preset fuzz -j$(JOBS)

bench: deps
	$(call configure,bench)
	cmake --build --preset bench -j$(JOBS)
	./bench/run-env-bench

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build
