# SPDX-License-Identifier: BSD-3-Clause
# libdpdo build. `make` builds the shared and static libraries, `make check`
# runs every test, `make demo` the main example. See README.md.

# ---- installation paths (GNU conventions; every installed path is under $(DESTDIR))
PREFIX       ?= /usr/local
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
BINDIR       ?= $(PREFIX)/bin
MANDIR       ?= $(PREFIX)/share/man
# the documents (docs/*.md) and the examples (examples/) the manual pages point to
DOCDIR       ?= $(PREFIX)/share/doc/libdpdo
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR      ?=

# ---- user flags are left alone; ours live in separate variables
CC       ?= cc
CFLAGS   ?= -O2 -g
CPPFLAGS ?=
LDFLAGS  ?=

# ---- versions come from include/dpdo/version.h only
vfield = $(shell sed -n 's/^\#define DPDO_$(1) \([0-9][0-9]*\).*/\1/p' include/dpdo/version.h)
VMAJOR  := $(call vfield,VERSION_MAJOR)
VMINOR  := $(call vfield,VERSION_MINOR)
VPATCH  := $(call vfield,VERSION_PATCH)
ABI     := $(call vfield,ABI_MAJOR)
VERSION := $(VMAJOR).$(VMINOR).$(VPATCH)

# ---- dependencies: pkg-config when a .pc exists, else Debian's multiarch location
BLIS_CFLAGS ?= $(shell pkg-config --cflags blis 2>/dev/null)
BLIS_LIBS   ?= $(shell pkg-config --libs blis 2>/dev/null || echo -lblis)
ZLIB_CFLAGS ?= $(shell pkg-config --cflags zlib 2>/dev/null)
ZLIB_LIBS   ?= $(shell pkg-config --libs zlib 2>/dev/null || echo -lz)
LAPACK_LIBS ?= $(shell pkg-config --libs lapack 2>/dev/null || echo -llapack)
# libsodium: the secret keys and the cipher behind secure noise, the ledger MAC (docs/privacy.md)
SODIUM_CFLAGS ?= $(shell pkg-config --cflags libsodium 2>/dev/null)
SODIUM_LIBS   ?= $(shell pkg-config --libs libsodium 2>/dev/null || echo -lsodium)
# OpenSSL (libcrypto): the AES-256-CTR keystream of keyed (secure) streams, AES-NI when the CPU has
# it (lib/rng/rng.c, docs/rng.md)
CRYPTO_CFLAGS ?= $(shell pkg-config --cflags libcrypto 2>/dev/null)
CRYPTO_LIBS   ?= $(shell pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto)
# FFTW: composition of privacy loss distributions (lib/privacy/pld.c)
FFTW_CFLAGS ?= $(shell pkg-config --cflags fftw3 2>/dev/null)
FFTW_LIBS   ?= $(shell pkg-config --libs fftw3 2>/dev/null || echo -lfftw3)
# MPFR (+ GMP): the exact samplers' rare fallback brackets exp(-x) with correctly rounded
# mpfr_exp when the double-precision band cannot decide a comparison (lib/rng/rng_discrete.c)
MPFR_LIBS   ?= -lmpfr -lgmp
# LAPACK before BLIS: a static link resolves left to right, and LAPACK's BLAS calls (dtrsm_, ...)
# are BLIS's
DEP_LIBS     = $(LAPACK_LIBS) $(BLIS_LIBS) $(ZLIB_LIBS) $(SODIUM_LIBS) $(CRYPTO_LIBS) $(FFTW_LIBS) $(MPFR_LIBS) -lm -lpthread
# what `cc -static ... $(pkg-config --static --libs dpdo)` needs beyond that (dpdo.pc's Libs.private):
# Debian's liblapack is the Fortran reference LAPACK (libgfortran, libquadmath) and libblis-dev's
# default BLIS is the OpenMP build (libgomp). Another BLIS/LAPACK: set STATIC_EXTRA_LIBS.
STATIC_EXTRA_LIBS ?= -lgfortran -lquadmath -lgomp
PC_PRIVATE_LIBS = $(LAPACK_LIBS) $(BLIS_LIBS) $(ZLIB_LIBS) $(SODIUM_LIBS) $(CRYPTO_LIBS) $(FFTW_LIBS) $(MPFR_LIBS) \
                  $(STATIC_EXTRA_LIBS) -lm -lpthread

# ---- our flags
WARN        = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
DPDO_CFLAGS = -std=c11 -D_DEFAULT_SOURCE $(WARN) -ffp-contract=off -Iinclude -Ilib \
              $(BLIS_CFLAGS) $(ZLIB_CFLAGS) $(SODIUM_CFLAGS) $(CRYPTO_CFLAGS) $(FFTW_CFLAGS)
# GCC's -O2 vectorises only loops whose trip count is a multiple of the vector width; the
# "cheap" model also takes the per-node loops over d with a scalar tail. The vectoriser never
# reassociates floating-point arithmetic (no -ffast-math), so results are bit-identical.
VECT_CFLAGS := $(shell $(CC) -fvect-cost-model=cheap -E -x c /dev/null >/dev/null 2>&1 && echo -fvect-cost-model=cheap)
LIB_CFLAGS  = $(DPDO_CFLAGS) $(VECT_CFLAGS) -fPIC -fvisibility=hidden -DDPDO_BUILDING

# objects of one compiler never mix with another's: `make CC=clang ...` builds in build-clang
BUILD   ?= $(if $(findstring clang,$(notdir $(firstword $(CC)))),build-clang,build)
AREAS   ?= core rng data model net privacy solver engine alg audit
LIBSRC  ?= $(foreach a,$(AREAS),$(wildcard lib/$(a)/*.c))
LIBOBJ   = $(patsubst lib/%.c,$(BUILD)/rel/%.o,$(LIBSRC))
TESTOBJ  = $(patsubst lib/%.c,$(BUILD)/test/%.o,$(LIBSRC))

SONAME   = libdpdo.so.$(ABI)
SOFILE   = libdpdo.so.$(ABI).$(VMINOR).$(VPATCH)
SHLIB    = $(BUILD)/lib/$(SOFILE)
STLIB    = $(BUILD)/lib/libdpdo.a
TESTLIB  = $(BUILD)/test/libdpdo_test.a
MAP      = lib/libdpdo.map

TESTSRC   ?= $(wildcard tests/test_*.c)
TESTBIN    = $(patsubst tests/%.c,$(BUILD)/tests/%,$(TESTSRC))
EXAMPLESRC = $(filter-out examples/mpi_run.c,$(wildcard examples/*.c))
EXAMPLEBIN = $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLESRC))
TOOLSRC    = $(wildcard tools/*.c)
TOOLBIN    = $(patsubst tools/%.c,$(BUILD)/bin/%,$(TOOLSRC))
BENCHSRC   = $(wildcard bench/*.c)
BENCHBIN   = $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCHSRC))

.PHONY: all lib examples tools check check-asan check-valgrind check-audit-long check-exports check-since check-cycles format-check format check-abi \
        abi-baseline check-version man check-man check-doc \
        check-install check-long bench demo deps install uninstall clean map python-capi check-python-capi tests mpi check-mpi fuzz-long \
        check-run choosing \
        check-python-examples data-debian-text fuzz
.DEFAULT_GOAL := all

all: lib tools examples $(BUILD)/dpdo.pc mpi
lib: $(SHLIB) $(STLIB)

# ---- the library ------------------------------------------------------------
$(BUILD)/rel/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) $(CFLAGS) $(FILE_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/test/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(LIB_CFLAGS) -DDPDO_FAULT_INJECTION $(CFLAGS) $(FILE_CFLAGS) -MMD -MP -c $< -o $@

# Sanitizer builds of the 8-lane kernels: lib/data/kernels_l8.c is wide always-inline SIMD
# templates (8 rows x 8 lanes unrolled); clang needs > 2.5 CPU-minutes for it at -O1 with
# -fsanitize=address,undefined, almost all of it in UBSan's checks on the unrolled lane
# arithmetic. In any build whose CFLAGS ask for a sanitizer (check-asan, fuzz) that one file
# keeps AddressSanitizer (its loads and stores are checked) but not UBSan (SAN_L8_CFLAGS);
# every other file, and the callers of these kernels, keep both. Same code, same bits.
# Measured (clang 14, -g -O1): no sanitizer 7.1 CPU-s, -fsanitize=address 22.8 CPU-s,
# -fsanitize=address,undefined > 150 CPU-s.
SAN_L8_CFLAGS ?= -fno-sanitize=undefined
$(BUILD)/rel/data/kernels_l8.o $(BUILD)/test/data/kernels_l8.o: \
    FILE_CFLAGS = $(if $(findstring -fsanitize=,$(CFLAGS)),$(SAN_L8_CFLAGS))

$(SHLIB): $(LIBOBJ) $(MAP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(MAP) \
	    -Wl,--no-undefined -o $@ $(LIBOBJ) $(DEP_LIBS)
	ln -sf $(SOFILE) $(BUILD)/lib/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/lib/libdpdo.so

$(STLIB): $(LIBOBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $(LIBOBJ)

$(TESTLIB): $(TESTOBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $(TESTOBJ)

# dpdo.pc is written again at install time so that it names the PREFIX,
# LIBDIR and INCLUDEDIR of that install, not those of the first build.
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
             -e 's|@VERSION@|$(VERSION)|' -e 's|@DEP_LIBS@|$(PC_PRIVATE_LIBS)|'
$(BUILD)/dpdo.pc: dpdo.pc.in include/dpdo/version.h
	@mkdir -p $(dir $@)
	$(PC_SED) $< > $@

# The version script is generated from the DPDO_API declarations in the public
# headers (`make map`) and committed; check-exports proves that headers, map
# and the symbols libdpdo.so exports are the same set.
# `make map` also regenerates the Python binding's ctypes declarations (python/dpdo/_capi.py) from
# the same headers; check-python-capi proves that file current (scripts/gen-python.py, clang).
map:
	sh scripts/gen-map.sh > $(MAP)
	sh scripts/gen-map.sh mpi > $(MPI_MAP)
	$(or $(PYTHON),python3) scripts/gen-python.py python/dpdo/_capi.py

python-capi:
	$(or $(PYTHON),python3) scripts/gen-python.py python/dpdo/_capi.py

check-python-capi:
	@PYTHON=$(or $(PYTHON),python3) sh scripts/check-python-capi.sh

# ---- tests, examples, tools, bench --------------------------------------------
# Tests link the fault-injection build statically so they can reach internal
# helpers (dpdo__fault_arm) and test the allocation failure paths.
$(BUILD)/tests/%: tests/%.c $(TESTLIB) tests/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(DPDO_CFLAGS) -DDPDO_FAULT_INJECTION $(CFLAGS) -MMD -MP $< -o $@ \
	    $(TESTLIB) $(DEP_LIBS) $(LDFLAGS)

$(BUILD)/examples/%: examples/%.c examples/common.h $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(DPDO_CFLAGS) -DDPDO_STATIC $(CFLAGS) $< -o $@ $(STLIB) $(DEP_LIBS) $(LDFLAGS)

$(BUILD)/bin/%: tools/%.c $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(DPDO_CFLAGS) -DDPDO_STATIC $(CFLAGS) $< -o $@ $(STLIB) $(DEP_LIBS) $(LDFLAGS)

$(BUILD)/bench/%: bench/%.c $(STLIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(DPDO_CFLAGS) -Ilib -DDPDO_STATIC $(CFLAGS) -O3 $< -o $@ $(STLIB) $(DEP_LIBS) $(LDFLAGS)

# ---- libdpdo_mpi: built when mpicc is present (scripts/install-deps.sh installs MPICH) -----------
MPICC    ?= mpicc
MPIEXEC  ?= mpiexec
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && echo 1)
MPI_SONAME = libdpdo_mpi.so.$(ABI)
MPI_SOFILE = libdpdo_mpi.so.$(ABI).$(VMINOR).$(VPATCH)
MPI_SHLIB  = $(BUILD)/lib/$(MPI_SOFILE)
MPI_STLIB  = $(BUILD)/lib/libdpdo_mpi.a
MPI_OBJ    = $(BUILD)/mpi/mpi.o
MPI_MAP    = lib/mpi/libdpdo_mpi.map
MPI_TEST   = $(BUILD)/tests/mpi/test_mpi
MPI_EXAMPLES = $(if $(HAVE_MPI),$(BUILD)/examples/mpi_run)
MPI_BENCH  = $(if $(HAVE_MPI),$(BUILD)/bench/bench_mpi)
MPI_RANKS ?= 1 2 4

$(MPI_OBJ): lib/mpi/mpi.c include/dpdo/mpi.h include/dpdo/transport.h lib/core/options_impl.h
	@mkdir -p $(dir $@)
	$(MPICC) $(CPPFLAGS) -std=c11 -D_DEFAULT_SOURCE $(WARN) -ffp-contract=off -Iinclude -fPIC \
	    -fvisibility=hidden -DDPDO_BUILDING $(CFLAGS) -c $< -o $@

$(MPI_SHLIB): $(MPI_OBJ) $(SHLIB) $(MPI_MAP)
	$(MPICC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(MPI_SONAME) -Wl,--version-script=$(MPI_MAP) \
	    -o $@ $(MPI_OBJ) -L$(BUILD)/lib -ldpdo
	ln -sf $(MPI_SOFILE) $(BUILD)/lib/$(MPI_SONAME)
	ln -sf $(MPI_SONAME) $(BUILD)/lib/libdpdo_mpi.so

$(MPI_STLIB): $(MPI_OBJ)
	rm -f $@
	$(AR) rcs $@ $(MPI_OBJ)

$(BUILD)/dpdo-mpi.pc: dpdo-mpi.pc.in include/dpdo/version.h
	@mkdir -p $(dir $@)
	$(PC_SED) $< > $@

mpi: $(if $(HAVE_MPI),$(MPI_SHLIB) $(MPI_STLIB) $(BUILD)/dpdo-mpi.pc $(MPI_EXAMPLES))

$(MPI_TEST): tests/mpi/test_mpi.c $(MPI_STLIB) $(STLIB)
	@mkdir -p $(dir $@)
	$(MPICC) $(CPPFLAGS) $(DPDO_CFLAGS) -DDPDO_STATIC $(CFLAGS) $< -o $@ $(MPI_STLIB) $(STLIB) $(DEP_LIBS) $(LDFLAGS)

$(BUILD)/examples/mpi_run: examples/mpi_run.c examples/common.h $(MPI_STLIB) $(STLIB)
	@mkdir -p $(dir $@)
	$(MPICC) $(CPPFLAGS) $(DPDO_CFLAGS) -DDPDO_STATIC $(CFLAGS) $< -o $@ $(MPI_STLIB) $(STLIB) $(DEP_LIBS) $(LDFLAGS)

$(BUILD)/bench/bench_mpi: bench/mpi/bench_mpi.c $(MPI_STLIB) $(STLIB)
	@mkdir -p $(dir $@)
	$(MPICC) $(CPPFLAGS) $(DPDO_CFLAGS) -Ilib -DDPDO_STATIC $(CFLAGS) -O3 $< -o $@ $(MPI_STLIB) $(STLIB) $(DEP_LIBS) $(LDFLAGS)

# `make check-long`: what make check leaves out for time (README.md, "Test targets"):
# the exact samplers at scale: chi-square of 10^8 draws per case, the acceptance rate, a planted
# defect (tests/long_exact.c; DPDO_LONG_N=1e7 for a shorter run); then with DPDO_TEST_LONG=1 the
# whole grids and sample counts of LONG_TESTS (make check runs a fixed part of each, with the same
# assertions) and every example's --no-fail-exit run of check-verdicts.
LONG_TESTS = $(BUILD)/tests/test_secure_budget $(BUILD)/tests/test_audit $(if $(PYTHON),tests/python/test_sklearn.py)
check-long: $(BUILD)/tests/long_exact $(filter $(BUILD)/%,$(LONG_TESTS)) examples lib
	$(BUILD)/tests/long_exact
	@DPDO_TEST_LONG=1 BUILD=$(BUILD) sh tests/run.sh $(LONG_TESTS) -- check-verdicts

# `make check-mpi`: the bit-identity and failure tests with 1, 2 and 4 ranks on this machine
# (loopback), then a run where a rank stops taking part (DPDO_E_IO within the timeout).
check-mpi: $(if $(HAVE_MPI),$(MPI_TEST) $(BUILD)/examples/mpi_run)
	@if [ -z "$(HAVE_MPI)" ]; then echo "check-mpi: no mpicc (install mpich and libmpich-dev)"; exit 1; fi
	@mkdir -p $(BUILD)/test-logs
	@for k in $(MPI_RANKS); do \
	    echo "== mpiexec -n $$k $(MPI_TEST)"; \
	    timeout 600 $(MPIEXEC) -n $$k $(MPI_TEST) > $(BUILD)/test-logs/mpi-$$k.log 2>&1; rc=$$?; \
	    grep -E '^(not ok|# summary)' $(BUILD)/test-logs/mpi-$$k.log; [ $$rc -eq 0 ] || exit 1; \
	done
	@echo "== DPDO_MPI_TEST_VANISH=1 mpiexec -n 2 $(MPI_TEST)"
	@DPDO_MPI_TEST_VANISH=1 timeout 120 $(MPIEXEC) -n 2 $(MPI_TEST) > $(BUILD)/test-logs/mpi-vanish.log 2>&1; \
	    grep -E '^(ok|not ok|# summary)' $(BUILD)/test-logs/mpi-vanish.log; grep -q '^ok 1 ' $(BUILD)/test-logs/mpi-vanish.log
	@# three hosts made of network namespaces: one rank per host and a host whose link goes down
	@# or whose process is killed mid-run (MPI_HOSTS_MODE=check; the latency runs: check-mpi-hosts)
	@$(MAKE) --no-print-directory check-mpi-hosts MPI_HOSTS_MODE=check

# `make check-mpi-hosts`: the ranks on three hosts made of Linux network namespaces joined by a
# bridge (tests/mpi/netns.sh: test_mpi's bit-identity cases, mpi_run against one process with
# added latency where tc netem exists, a host whose link goes down or whose process is killed).
# Skipped with a message where network namespaces cannot be made (not root, no CAP_SYS_ADMIN).
# MPI_HOSTS_MODE=quick (the default) leaves out the full test_mpi run across the hosts, =full runs
# it too (several minutes more), =check only the one-rank-per-host and vanishing-host checks (what
# make check-mpi runs, ~40 s), =vanish those with the killed host twice.
.PHONY: check-mpi-hosts
MPI_HOSTS_MODE ?= quick
check-mpi-hosts: $(if $(HAVE_MPI),$(MPI_TEST) $(BUILD)/examples/mpi_run)
	@mkdir -p $(BUILD)/test-logs
	@sh tests/mpi/netns.sh $(BUILD) $(MPI_HOSTS_MODE) 2>&1 | tee $(BUILD)/test-logs/mpi-hosts.log | grep '^check-mpi-hosts'; \
	    tail -1 $(BUILD)/test-logs/mpi-hosts.log | grep -q -E 'all passed|SKIPPED'

examples: $(EXAMPLEBIN)
tools: $(TOOLBIN)
tests: $(TESTBIN)

deps:
	@sh scripts/install-deps.sh

# `make demo` and `make check` build in parallel: -j$(JOBS) (default: the number of CPUs), unless
# make was given -j itself (then its jobserver is used as is). JOBS=1 builds serially.
JOBS     ?= $(shell nproc 2>/dev/null || echo 1)
PARALLEL  = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

# `make check`: install missing packages, build everything, run every test
# (C unit tests, export check, install + pkg-config quickstart), and end with
# "N passed, M failed".
check: deps
	@$(MAKE) --no-print-directory $(PARALLEL) all tests
	@$(MAKE) --no-print-directory check-run

# a sub-make, so that packages installed by `deps` (MPICH) are seen
# Left out as run elsewhere in it: tests/python/test_docs.py (check-doc runs the same Python blocks
# of docs/python.md, in order, in one namespace) and check-python-capi (test_capi.py's drift case
# runs scripts/check-python-capi.sh on a copy of the tree, unchanged first). Both stay targets.
CHECK_PYTESTS = $(filter-out tests/python/test_docs.py,$(PYTESTS))
check-run:
	@BUILD=$(BUILD) sh tests/run.sh $(TESTBIN) $(CHECK_PYTESTS) -- check-exports check-since check-cycles format-check check-abi check-version \
	    check-man check-doc check-install examples check-verdicts \
	    $(if $(PYTHON),check-python-examples) $(if $(HAVE_MPI),check-mpi)

# every claim check of the reproduction examples can FAIL, and a FAIL sets the exit status
check-verdicts: examples
	@sh tests/examples_verdicts.sh $(BUILD)

# the reproduction runs behind docs/reproductions.md (fresh seeds; rewrites its collected block):
# the --quick instances and the DP-WOR-SGD default runs, about 30 CPU-minutes; REPRO_FLAGS="--long
# --real --paper" adds the full default, real-data and paper-scale runs (about 1.5 CPU-hours more)
REPRO_FLAGS ?=
reproductions: examples $(if $(findstring --real,$(REPRO_FLAGS)),$(BUILD)/data/debian-text.svm)
	/usr/bin/python3 scripts/collect-reproductions.py --build $(BUILD) $(REPRO_FLAGS)
.PHONY: reproductions

# ---- Python binding (python/dpdo, ctypes): tests and examples with Debian's python3 -----------------
PYTHON  ?= $(wildcard /usr/bin/python3)
PYTESTS  = $(if $(PYTHON),$(wildcard tests/python/test_*.py))
check-python-examples: lib
	@mkdir -p $(BUILD)/test-logs
	@DPDO_PY_NO_NUMPY=1 BUILD=$(BUILD) $(PYTHON) tests/python/test_binding.py > $(BUILD)/test-logs/python-no-numpy.log 2>&1 || \
	    { echo "the Python tests fail without NumPy:"; grep -E '^(not ok|#   )' $(BUILD)/test-logs/python-no-numpy.log | head -20; exit 1; }
	@DPDO_LIBRARY=$(CURDIR)/$(BUILD)/lib/$(SONAME) $(PYTHON) examples/python/dp_dda_synthetic.py --quick
	@DPDO_LIBRARY=$(CURDIR)/$(BUILD)/lib/$(SONAME) $(PYTHON) examples/python/privacy_calculator.py \
	    --epsilon 1 --steps 1000 --poisson 0.01
	@DPDO_LIBRARY=$(CURDIR)/$(BUILD)/lib/$(SONAME) $(PYTHON) examples/python/dp_sklearn_fashion.py --quick \
	    --out $(BUILD)/test-logs/dp_fashion_curve.png

check-exports: $(SHLIB) $(if $(HAVE_MPI),$(MPI_SHLIB))
	@sh scripts/check-exports.sh $(SHLIB) $(MAP)
	$(if $(HAVE_MPI),@sh scripts/check-exports.sh $(MPI_SHLIB) $(MPI_MAP) mpi)

# every public declaration says "Since M.m." (scripts/check-since.py)
check-since:
	@python3 scripts/check-since.py

# lib/, include/ and tools/ follow .clang-format (Debian's clang-format 14; another major version
# formats differently, so the check names the version it needs and skips without it)
CLANG_FORMAT ?= $(firstword $(shell command -v clang-format-14 clang-format 2>/dev/null))
FORMAT_SRC = $(shell git ls-files 'lib/*.[ch]' 'include/*.h' 'tools/*.[ch]' 2>/dev/null || \
	find lib include tools -name '*.[ch]')
format-check:
	@if [ -z "$(CLANG_FORMAT)" ]; then echo "format-check: SKIPPED (no clang-format; scripts/install-deps.sh installs it)"; \
	elif ! $(CLANG_FORMAT) --version | grep -q 'version 14\.'; then \
	    echo "format-check: SKIPPED ($$($(CLANG_FORMAT) --version | head -1); the tree is formatted with version 14)"; \
	else $(CLANG_FORMAT) --dry-run --Werror $(FORMAT_SRC) 2>&1 | head -40; \
	    $(CLANG_FORMAT) --dry-run --Werror $(FORMAT_SRC) >/dev/null 2>&1 || \
	    { echo "format-check: run '$(CLANG_FORMAT) -i' on the files above"; exit 1; }; \
	    echo "format-check: $(words $(FORMAT_SRC)) files follow .clang-format"; fi

# format the library's sources in place (lib/, include/, tools/)
format:
	@$(CLANG_FORMAT) -i $(FORMAT_SRC)

# no two files of lib/ call or include each other in a cycle (scripts/check-cycles.py lists them)
check-cycles: lib $(if $(HAVE_MPI),$(MPI_OBJ))
	@python3 scripts/check-cycles.py $(BUILD)

check-install: lib $(BUILD)/dpdo.pc
	@sh tests/install_test.sh

# ---- ABI gate (docs/abi.md, "ABI policy") ---------------------------------------------------------
# abi/*.abi are abidw dumps of the released libraries (public types only: --headers-dir and
# --drop-private-types turn the opaque handles' internals into declarations), abi/constants.txt the
# values of the public enumerators. `make abi-baseline` writes them (once per release, from a build
# with -g); `make check-abi` (run by `make check`) fails on anything but additions and options
# structs growing at their end (scripts/check-abi.py says what is accepted).
ABIDW_FLAGS = --headers-dir include/dpdo --drop-private-types --no-corpus-path --no-show-locs --no-comp-dir-path
ABI_LIBS    = $(SHLIB) $(if $(HAVE_MPI),$(MPI_SHLIB))
abi-baseline: $(ABI_LIBS)
	@command -v abidw >/dev/null || { echo "abi-baseline: abidw missing (apt-get install abigail-tools)"; exit 1; }
	@for l in $(ABI_LIBS); do readelf -S $$l | grep -q '\.debug_info' || \
	    { echo "abi-baseline: $$l has no debug information (build with CFLAGS containing -g)"; exit 1; }; done
	@mkdir -p abi
	abidw $(ABIDW_FLAGS) --out-file abi/libdpdo.abi $(SHLIB)
	$(if $(HAVE_MPI),abidw $(ABIDW_FLAGS) --out-file abi/libdpdo_mpi.abi $(MPI_SHLIB))
	python3 scripts/check-abi.py --constants-dump > abi/constants.txt
	@$(MAKE) --no-print-directory check-abi
	@echo "abi-baseline: abi/ written for $(VERSION) and checked (commit it with the release)"

check-abi: $(ABI_LIBS)
	@if ! command -v abidiff >/dev/null; then echo "check-abi: SKIPPED, abidiff missing (apt-get install abigail-tools)"; exit 0; fi; \
	 python3 scripts/check-abi.py abi/libdpdo.abi $(SHLIB) "$(ABIDW_FLAGS)" && \
	 $(if $(HAVE_MPI),python3 scripts/check-abi.py abi/libdpdo_mpi.abi $(MPI_SHLIB) "$(ABIDW_FLAGS)" &&) \
	 python3 scripts/check-abi.py --constants abi/constants.txt

check-version:
	@sh scripts/check-version.sh

# ---- manual pages: generated from the headers (scripts/gen-man.py), checked by check-man ----------
MAN_DEPS = scripts/gen-man.py docs/libdpdo.3.in examples/train.c $(wildcard include/dpdo/*.h) \
           $(wildcard docs/*.1) $(wildcard tools/*.c)
man: $(BUILD)/man/.stamp
# the pages name DOCDIR: regenerate them when it changes (e.g. make install PREFIX=...)
$(BUILD)/man/.docdir: FORCE
	@mkdir -p $(@D); [ "$$(cat $@ 2>/dev/null)" = "$(DOCDIR)" ] || echo "$(DOCDIR)" > $@
$(BUILD)/man/.stamp: $(MAN_DEPS) $(BUILD)/man/.docdir
	python3 scripts/gen-man.py --out $(BUILD)/man --version $(VERSION) --docdir $(DOCDIR)
	@touch $@

check-man: man
	@sh scripts/check-man.sh $(BUILD)/man

# ---- documentation that is tested: every C, shell and Python block of README.md and docs/ -------
check-doc: lib $(STLIB) tools
	@BUILD=$(BUILD) python3 scripts/doctest.py

check-asan:
	@$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	    LDFLAGS="-fsanitize=address,undefined" tests tools
	@ASAN_OPTIONS=detect_leaks=1 DPDO_TEST_QUICK=1 BUILD=build-asan sh tests/run.sh \
	    $(patsubst tests/%.c,build-asan/tests/%,$(TESTSRC))

# ThreadSanitizer (gcc or clang -fsanitize=thread) on the tests that run the library from several
# threads: test_threads (one handle, library threads and host pools) and test_independent (two
# threads, each with its own handles, prepare with sigma calibration included). Any report fails
# the test (exit 66); the target ends with the number of reports. setarch -R: TSan's shadow memory
# needs the fixed layout that kernels with 32-bit mmap randomisation otherwise break.
.PHONY: check-tsan
TSAN_TESTS ?= test_threads test_independent
TSAN_RUN    = $(shell setarch -R true >/dev/null 2>&1 && echo setarch -R)
check-tsan:
	@$(MAKE) --no-print-directory BUILD=build-tsan CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=thread" $(patsubst %,build-tsan/tests/%,$(TSAN_TESTS))
	@TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 $(TSAN_OPTIONS)" DPDO_TEST_QUICK=1 \
	    DPDO_TEST_WRAP="$(TSAN_RUN)" BUILD=build-tsan sh tests/run.sh $(patsubst %,build-tsan/tests/%,$(TSAN_TESTS)); \
	    rc=$$?; echo "check-tsan: $$(cat $(patsubst %,build-tsan/test-logs/%.log,$(TSAN_TESTS)) | \
	    grep -c '^WARNING: ThreadSanitizer') ThreadSanitizer reports"; exit $$rc

check-valgrind: tests tools
	@DPDO_TEST_QUICK=1 DPDO_TEST_WRAP="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect" \
	    BUILD=$(BUILD) sh tests/run.sh $(TESTBIN)

bench: $(BENCHBIN) $(MPI_BENCH) lib
	@for b in $(BENCHBIN); do echo "== $$b"; $$b || exit 1; done
	@if [ -n "$(PYTHON)" ]; then echo "== bench/bench_python.py"; \
	    BUILD=$(BUILD) $(PYTHON) bench/bench_python.py || exit 1; fi
	@for k in $(if $(HAVE_MPI),$(MPI_RANKS)); do echo "== $(MPIEXEC) -n $$k $(MPI_BENCH)"; \
	    $(MPIEXEC) -n $$k $(MPI_BENCH) || exit 1; done

# The auditor's planted-bug suite and false-alarm repeats (docs/privacy-audit.md, "Planted bugs"):
# every bug of the test build on every type it applies to, the correct code of every private type
# AUDIT_REPEATS times; ~10 min of CPU. AUDIT_RUNS overrides the runs per dataset and node.
AUDIT_REPEATS ?= 20
check-audit-long: $(BUILD)/tests/test_audit_planted
	@DPDO_AUDIT_LONG=1 DPDO_AUDIT_REPEATS=$(AUDIT_REPEATS) $(if $(AUDIT_RUNS),DPDO_AUDIT_RUNS=$(AUDIT_RUNS)) \
	    $(BUILD)/tests/test_audit_planted

demo: deps
	@$(MAKE) --no-print-directory $(PARALLEL) all
	@sh scripts/demo.sh $(BUILD)

# ---- install -------------------------------------------------------------------
# Every file is built by a prerequisite, so the recipe only copies: `make -n install` prints
# the commands and runs none of them. RPATH=1 writes -Wl,-rpath,$(LIBDIR) into the installed
# dpdo.pc (and dpdo-mpi.pc), so programs built with pkg-config find libdpdo in a prefix the
# loader does not search; without it the install ends with the LD_LIBRARY_PATH / ldconfig hint.
RPATH ?=
PC_RPATH_SED = -e 's|^Libs: \(.*\)|Libs: -Wl,-rpath,$${libdir} \1|'
PC_RPATH = $(if $(filter 1 yes,$(RPATH)),$(PC_RPATH_SED))
install: lib $(BUILD)/dpdo.pc tools man mpi
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/dpdo $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	install -m 644 include/dpdo/*.h $(DESTDIR)$(INCLUDEDIR)/dpdo/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/$(SOFILE)
	ln -sf $(SOFILE) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libdpdo.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/libdpdo.a
	$(PC_SED) $(PC_RPATH) dpdo.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/dpdo.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/dpdo.pc
	install -m 755 $(TOOLBIN) $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 644 $(BUILD)/man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(BUILD)/man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -d $(DESTDIR)$(DOCDIR)/algorithms $(DESTDIR)$(DOCDIR)/design/notes $(DESTDIR)$(DOCDIR)/examples/python
	install -m 644 README.md CHANGELOG docs/*.md docs/*.png $(DESTDIR)$(DOCDIR)/
	install -m 644 docs/algorithms/*.md $(DESTDIR)$(DOCDIR)/algorithms/
	install -m 644 docs/design/*.md $(DESTDIR)$(DOCDIR)/design/
	install -m 644 docs/design/notes/*.md $(DESTDIR)$(DOCDIR)/design/notes/
	install -m 644 examples/*.c examples/*.h $(DESTDIR)$(DOCDIR)/examples/
	install -m 644 examples/python/* $(DESTDIR)$(DOCDIR)/examples/python/
ifneq ($(HAVE_MPI),)
	install -m 755 $(MPI_SHLIB) $(DESTDIR)$(LIBDIR)/$(MPI_SOFILE)
	ln -sf $(MPI_SOFILE) $(DESTDIR)$(LIBDIR)/$(MPI_SONAME)
	ln -sf $(MPI_SONAME) $(DESTDIR)$(LIBDIR)/libdpdo_mpi.so
	install -m 644 $(MPI_STLIB) $(DESTDIR)$(LIBDIR)/libdpdo_mpi.a
	$(PC_SED) $(PC_RPATH) dpdo-mpi.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/dpdo-mpi.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/dpdo-mpi.pc
else
	rm -f $(DESTDIR)$(INCLUDEDIR)/dpdo/mpi.h $(DESTDIR)$(MANDIR)/man3/dpdo_mpi*.3
endif
	@sh scripts/install-hint.sh "$(DESTDIR)" "$(LIBDIR)" "$(PKGCONFIGDIR)" "$(RPATH)"

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/$(SOFILE) $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libdpdo.so \
	      $(DESTDIR)$(LIBDIR)/libdpdo.a $(DESTDIR)$(PKGCONFIGDIR)/dpdo.pc \
	      $(DESTDIR)$(LIBDIR)/$(MPI_SOFILE) $(DESTDIR)$(LIBDIR)/$(MPI_SONAME) $(DESTDIR)$(LIBDIR)/libdpdo_mpi.so \
	      $(DESTDIR)$(LIBDIR)/libdpdo_mpi.a $(DESTDIR)$(PKGCONFIGDIR)/dpdo-mpi.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/dpdo $(DESTDIR)$(DOCDIR)
	@for t in $(TOOLBIN); do rm -f $(DESTDIR)$(BINDIR)/$$(basename $$t); done
	@for m in $$(python3 scripts/gen-man.py --list); do rm -f $(DESTDIR)$(MANDIR)/$$m; done

# ---- fuzzing (tests/fuzz/fuzz_*.c, libFuzzer with clang) ------------------------------------------------
# `make fuzz FUZZ_SECONDS=60` builds every harness with -fsanitize=fuzzer,address,undefined against a
# sanitized copy of the library and runs each for FUZZ_SECONDS, starting from its corpus
# (tests/fuzz/corpus for fuzz_parsers, tests/fuzz/corpus_<name> for fuzz_<name>); new inputs go to
# $(BUILD)/fuzz/new-<name>. A crash, leak, timeout (FUZZ_TIMEOUT below) or RSS over 2 GB fails the target; the
# per-harness libFuzzer summary ("stat::number_of_executed_units") is in $(BUILD)/fuzz/<name>.log.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS   = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -std=c11 -D_DEFAULT_SOURCE -ffp-contract=off -Iinclude -Ilib -DDPDO_BUILDING -DDPDO_STATIC \
                $(BLIS_CFLAGS) $(ZLIB_CFLAGS) $(SODIUM_CFLAGS) $(FFTW_CFLAGS)
FUZZSRC      ?= $(wildcard tests/fuzz/fuzz_*.c)
FUZZBIN       = $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZSRC))
FUZZOBJ       = $(patsubst lib/%.c,$(BUILD)/fuzz/obj/%.o,$(LIBSRC))
FUZZLIB       = $(BUILD)/fuzz/libdpdo_fuzz.a

$(BUILD)/fuzz/obj/%.o: lib/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FILE_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
$(BUILD)/fuzz/obj/data/kernels_l8.o: FILE_CFLAGS = $(SAN_L8_CFLAGS)

$(FUZZLIB): $(FUZZOBJ)
	rm -f $@
	$(AR) rcs $@ $(FUZZOBJ)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZLIB) $(wildcard tools/*.c)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< -o $@ $(FUZZLIB) $(DEP_LIBS)

# Per-input time limit (libFuzzer -timeout, seconds): 1 s, except for the dpdo-privacy command
# line. Its harness parses and checks the arguments as given but computes at a bounded size
# (tests/fuzz/fuzz_privacy_cli.c: 16 releases, calibrations by rdp), so an input costs 2 ms on
# average under ASan + UBSan (it was 1-10 s for the corpus's PLD calibrations, which held the
# harness to ~13 executions a second); its slowest inputs are under 0.1 s in a quiet run, and
# 10 s leaves room for a busy CI machine (libFuzzer's limit is wall time) while a hang is still
# reported.
FUZZ_TIMEOUT ?= 1
FUZZ_TIMEOUT_fuzz_privacy_cli ?= 10
# Longest input (libFuzzer -max_len): 4096 bytes, except checkpoint images, whose valid seeds are
# about 10 KB (at 4096 libFuzzer truncates them and every mutation meets the size refusal).
FUZZ_MAXLEN ?= 4096
FUZZ_MAXLEN_fuzz_checkpoint ?= 16384
# `make fuzz-long`: every harness for FUZZ_RUNS executions (>= 10^6; not part of make check).
FUZZ_RUNS ?= 1000000
FUZZ_LIMIT ?= -max_total_time=$(FUZZ_SECONDS)

fuzz-long:
	@$(MAKE) --no-print-directory fuzz FUZZ_LIMIT="-runs=$(FUZZ_RUNS)"

fuzz: $(FUZZBIN)
	@for f in $(FUZZBIN); do n=$$(basename $$f); c=tests/fuzz/corpus_$${n#fuzz_}; \
	    [ $$n = fuzz_parsers ] && c=tests/fuzz/corpus; mkdir -p $(BUILD)/fuzz/new-$$n $$c; \
	    to=$(FUZZ_TIMEOUT); [ $$n = fuzz_privacy_cli ] && to=$(FUZZ_TIMEOUT_fuzz_privacy_cli); \
	    ml=$(FUZZ_MAXLEN); [ $$n = fuzz_checkpoint ] && ml=$(FUZZ_MAXLEN_fuzz_checkpoint); \
	    echo "== $$n ($(FUZZ_LIMIT), timeout $$to s, max_len $$ml, corpus $$c)"; \
	    $$f $(FUZZ_LIMIT) -timeout=$$to -rss_limit_mb=2048 -malloc_limit_mb=1024 \
	        -max_len=$$ml -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/$$n- \
	        $(BUILD)/fuzz/new-$$n $$c > $(BUILD)/fuzz/$$n.log 2>&1; rc=$$?; \
	    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY' $(BUILD)/fuzz/$$n.log; \
	    [ $$rc -eq 0 ] || { echo "$$n failed (exit $$rc): $(BUILD)/fuzz/$$n.log"; exit 1; }; done

clean:
	rm -rf build build-asan build-*

-include $(LIBOBJ:.o=.d) $(TESTOBJ:.o=.d) $(TESTBIN:=.d) $(FUZZOBJ:.o=.d)

# ---- docs/choosing.md's tables: test accuracy vs epsilon of every estimator with its defaults,
# beside scikit-learn and a centralized DP-SGD reference (scripts/eval-defaults.py; about an hour
# for the full grid on two idle cores: CHOOSING_SEEDS / CHOOSING_TASKS scale it down); --tuner
# adds a second table per task with every estimator under PrivateSearchCV (more than doubles it)
CHOOSING_SEEDS ?= 10
CHOOSING_TASKS ?= fashion-0-2,fashion-4-6,breast-cancer,digits-3-8,digits-1-7,wine
CHOOSING_EPS   ?= 0.25,0.5,1,2,4,8
choosing: lib
	DPDO_LIBRARY=$(CURDIR)/$(BUILD)/lib/$(SONAME) /usr/bin/python3 scripts/eval-defaults.py --make \
	    --tuner --table docs/choosing.md --seeds $(CHOOSING_SEEDS) --tasks $(CHOOSING_TASKS) --eps-list $(CHOOSING_EPS)

# ---- real data offline (docs/data.md): the rcv1 stand-in from Debian's package descriptions
data-debian-text: $(BUILD)/data/debian-text.svm
$(BUILD)/data/debian-text.svm: scripts/make-debian-text.py
	@mkdir -p $(dir $@)
	/usr/bin/python3 scripts/make-debian-text.py $@

# a prerequisite that is always out of date (rules that decide for themselves whether to write)
FORCE:

# the Muffliato example (docs/muffliato.md) is its program and a header of the user algorithm type
$(BUILD)/examples/muffliato: examples/muffliato.h
