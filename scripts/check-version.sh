#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The release number lives in include/dpdo/version.h; every other place that states it must agree:
# debian/changelog (the package version), python/pyproject.toml, python/_build.py and
# python/dpdo/_capi.py (generated from the headers; __version__ is read from it). dpdo.pc is
# generated from version.h.
set -eu
cd "$(dirname "$0")/.."
want=$(sed -n 's/^#define DPDO_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' include/dpdo/version.h | paste -sd.)
fail=0
check() { [ "$2" = "$want" ] || { echo "check-version: $1 says '$2', include/dpdo/version.h $want"; fail=1; }; }
check debian/changelog "$(sed -n '1s/^[^ ]* (\([^)-]*\).*/\1/p' debian/changelog)"
check python/pyproject.toml "$(sed -n 's/^version = "\(.*\)"/\1/p' python/pyproject.toml)"
check python/_build.py "$(sed -n 's/^NAME, VERSION = "dpdo", "\(.*\)"/\1/p' python/_build.py)"
# __version__ comes from the generated module (scripts/gen-python.py copies version.h's numbers)
check python/dpdo/_capi.py "$(sed -n 's/^DPDO_VERSION_\(MAJOR\|MINOR\|PATCH\) = \([0-9]*\)$/\2/p' python/dpdo/_capi.py | paste -sd.)"
[ $fail -eq 0 ] && echo "check-version: $want everywhere (version.h, debian/changelog, python package)"
exit $fail
