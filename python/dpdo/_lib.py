# SPDX-License-Identifier: BSD-3-Clause
"""Loading libdpdo, the C prototypes, errors and array conversion.

The library is found in this order; what the user named comes first (`LIBRARY_SOURCE` says which
was loaded, `LIBRARY_PATH` its path, `LIBRARY_VERSION` its release):

1. the environment variable DPDO_LIBRARY (a path; an error if it does not load or does not fit);
2. when PKG_CONFIG_PATH is set: the libdir of `pkg-config --variable=libdir dpdo` (so a
   `make install PREFIX=<prefix>` named by PKG_CONFIG_PATH=<prefix>/lib/pkgconfig wins over an
   installed package; an error if its dpdo.pc names no loadable library that fits);
3. the package's own copy: `dpdo/libdpdo.so.1` next to this file (a wheel that bundles it);
4. the build tree this package sits in: `<repo>/$BUILD/lib/libdpdo.so.1` (BUILD: "build");
5. the system loader: `ctypes.util.find_library("dpdo")` (the loader cache, LD_LIBRARY_PATH),
   then the SONAME libdpdo.so.1;
6. the libdir of pkg-config's default search path (a prefix the loader does not know).

Version check (the release this package was generated from is __version__, VERSION below):
- a different ABI major (SONAME) never loads;
- an OLDER release than VERSION is refused (it may lack functions and fixes this package
  relies on): ImportError from steps 1-2, skipped with a note from the automatic steps 3-6;
- a NEWER release of the same ABI is used (additions only within an ABI, docs/abi.md) with a
  LibraryVersionWarning naming both releases;
- the same release loads silently.
"""
import ctypes as C
import ctypes.util
import os
import subprocess
import sys
import warnings

from . import _capi

ABI_MAJOR = _capi.DPDO_ABI_MAJOR  # include/dpdo/version.h, through the generated module
SONAME = "libdpdo.so.%d" % ABI_MAJOR

# ---- NumPy (optional) ----------------------------------------------------------------------------
np = None
NUMPY_DISABLED = bool(os.environ.get("DPDO_PY_NO_NUMPY"))
_NUMPY_IMPORT_ERROR = None
if not NUMPY_DISABLED:
    try:
        import numpy as np  # noqa: F811
    except ImportError as _e:  # pragma: no cover - depends on the interpreter
        np = None
        _NUMPY_IMPORT_ERROR = _e
        warnings.warn("dpdo: NumPy cannot be imported by %s (%s): arrays come back as Python lists and the "
                      "scikit-learn estimators are unavailable. On Debian use /usr/bin/python3 with python3-numpy, "
                      "or set DPDO_PY_NO_NUMPY=1 to choose lists on purpose." % (sys.executable, _e),
                      ImportWarning, stacklevel=2)


def has_numpy():
    """True when the package uses NumPy (installed and not disabled by DPDO_PY_NO_NUMPY)."""
    return np is not None


def require_numpy(what):
    """Return the numpy module, or raise ImportError saying that `what` needs NumPy and why it is absent."""
    if np is not None:
        return np
    why = ("disabled by DPDO_PY_NO_NUMPY=1" if NUMPY_DISABLED
           else "not importable by %s: %s" % (sys.executable, _NUMPY_IMPORT_ERROR))
    raise ImportError("dpdo: %s needs NumPy, which is %s (on Debian: apt-get install python3-numpy and run "
                      "/usr/bin/python3)" % (what, why))


def _looks_like_array(x):
    return hasattr(x, "__array_interface__") or hasattr(x, "__array__") or hasattr(x, "tocsr")


VERSION = (_capi.DPDO_VERSION_MAJOR, _capi.DPDO_VERSION_MINOR, _capi.DPDO_VERSION_PATCH)


class LibraryVersionWarning(UserWarning):
    """The loaded libdpdo is a newer release (same ABI) than the headers this package was generated from."""


def _pkg_config_libdir():
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "dpdo"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    d = r.stdout.strip()
    return d if r.returncode == 0 and d else None


def _candidates():
    """(source, path, named) triples in the search order of the module docstring; named: the user named it."""
    env = os.environ.get("DPDO_LIBRARY")
    if env:
        yield "DPDO_LIBRARY", env, True
        return
    libdir = None
    if os.environ.get("PKG_CONFIG_PATH"):
        libdir = _pkg_config_libdir()
        if libdir:
            yield "PKG_CONFIG_PATH", os.path.join(libdir, SONAME), True
    here = os.path.dirname(os.path.abspath(__file__))
    yield "package", os.path.join(here, SONAME), False
    repo = os.path.dirname(os.path.dirname(here))
    yield "build tree", os.path.join(repo, os.environ.get("BUILD", "build"), "lib", SONAME), False
    found = ctypes.util.find_library("dpdo")
    if found:
        yield "find_library", found, False
    yield "loader", SONAME, False
    if libdir is None:
        libdir = _pkg_config_libdir()
        if libdir:
            yield "pkg-config", os.path.join(libdir, SONAME), False


def _release(lib):
    lib.dpdo_version_number.argtypes = []
    lib.dpdo_version_number.restype = C.c_int
    n = lib.dpdo_version_number()
    return (n // 10000, n // 100 % 100, n % 100)


def _vstr(v):
    return "%d.%d.%d" % v


def _load():
    tried = []
    for source, path, named in _candidates():
        if source not in ("find_library", "loader") and not os.path.exists(path):
            if named:
                raise ImportError("dpdo: %s names %s, which does not exist" % (
                    "DPDO_LIBRARY" if source == "DPDO_LIBRARY" else "pkg-config (PKG_CONFIG_PATH=%s)"
                    % os.environ.get("PKG_CONFIG_PATH"), path))
            tried.append("%s: %s (absent)" % (source, path))
            continue
        try:
            lib = C.CDLL(path)
        except OSError as e:
            if named:
                raise ImportError("dpdo: %s=%s cannot be loaded (%s)" % (source, path, e)) from e
            tried.append("%s: %s (%s)" % (source, path, e))
            continue
        lib.dpdo_abi_major.argtypes = []
        lib.dpdo_abi_major.restype = C.c_int
        abi = lib.dpdo_abi_major()
        release = _release(lib)
        why = None
        if abi != ABI_MAJOR:
            why = "has ABI %d, this package needs ABI %d" % (abi, ABI_MAJOR)
        elif release < VERSION:
            why = ("is libdpdo %s, older than the %s this package was generated from (install or build %s or "
                   "newer)" % (_vstr(release), _vstr(VERSION), _vstr(VERSION)))
        if why:
            if named:
                raise ImportError("dpdo: %s (from %s) %s" % (path, source, why))
            tried.append("%s: %s %s" % (source, path, why))
            continue
        if release > VERSION:
            warnings.warn("dpdo: %s (from %s) is libdpdo %s, newer than the %s this package was generated from; "
                          "it is ABI-compatible, but the functions added since are not available from Python"
                          % (path, source, _vstr(release), _vstr(VERSION)), LibraryVersionWarning, stacklevel=3)
        if source == "loader" or source == "find_library":
            path = _loaded_path(lib, path)
        return lib, path, source, release
    raise ImportError("dpdo: cannot find %s %s or newer. Tried:\n  %s\nInstall libdpdo (`make install PREFIX=...`, "
                      "then name the prefix: PKG_CONFIG_PATH=<prefix>/lib/pkgconfig) or set DPDO_LIBRARY to the "
                      "path of %s." % (SONAME, _vstr(VERSION), "\n  ".join(tried), SONAME))


def _loaded_path(lib, fallback):
    """The file the dynamic loader opened for lib (dladdr of one of its functions), or fallback."""
    class _DlInfo(C.Structure):
        _fields_ = [("dli_fname", C.c_char_p), ("dli_fbase", C.c_void_p), ("dli_sname", C.c_char_p),
                    ("dli_saddr", C.c_void_p)]
    try:
        libc = C.CDLL(None)
        dladdr = libc.dladdr
    except (OSError, AttributeError):
        return fallback
    dladdr.argtypes = [C.c_void_p, C.POINTER(_DlInfo)]
    dladdr.restype = C.c_int
    info = _DlInfo()
    if dladdr(C.cast(lib.dpdo_abi_major, C.c_void_p), C.byref(info)) and info.dli_fname:
        return os.path.realpath(info.dli_fname.decode())
    return fallback


lib, LIBRARY_PATH, LIBRARY_SOURCE, LIBRARY_VERSION = _load()

# ---- status codes and errors ----------------------------------------------------------------------
OK, ROUND, DONE = _capi.DPDO_OK, _capi.DPDO_ROUND, _capi.DPDO_DONE
E_INVAL, E_NOMEM, E_STATE, E_CALLBACK = _capi.DPDO_E_INVAL, _capi.DPDO_E_NOMEM, _capi.DPDO_E_STATE, _capi.DPDO_E_CALLBACK
E_NUMERIC, E_BUDGET, E_VERSION = _capi.DPDO_E_NUMERIC, _capi.DPDO_E_BUDGET, _capi.DPDO_E_VERSION
E_UNSUPPORTED, E_IO, E_FORMAT, E_CANCELED = (_capi.DPDO_E_UNSUPPORTED, _capi.DPDO_E_IO, _capi.DPDO_E_FORMAT,
                                             _capi.DPDO_E_CANCELED)
E_MISUSE = _capi.DPDO_E_MISUSE


class DpdoError(Exception):
    """A libdpdo call failed: .status is the DPDO_E_* code, .message the handle's message."""

    def __init__(self, status, message):
        self.status = status
        self.message = message
        super().__init__("%s (%s)" % (message, _status_name(status)))


class InvalidArgument(DpdoError, ValueError):
    """A bad argument (DPDO_E_INVAL); also a ValueError."""


class OutOfMemory(DpdoError, MemoryError):
    """The library could not allocate (DPDO_E_NOMEM); also a MemoryError."""


class StateError(DpdoError):
    """The call is not allowed in the handle's state, or the handle is in use by another thread (DPDO_E_STATE)."""


class CallbackError(DpdoError):
    """A user callback failed; a Python exception raised in it is the __cause__."""


class NumericError(DpdoError, ArithmeticError):
    """A non-finite value or a numerical failure (DPDO_E_NUMERIC)."""


class BudgetError(DpdoError):
    """The privacy budget would be exceeded (DPDO_E_BUDGET)."""


class VersionError(DpdoError):
    """A struct or file version the library does not know (DPDO_E_VERSION)."""


class Unsupported(DpdoError):
    """The combination is not supported, e.g. an accountant that cannot account an event (DPDO_E_UNSUPPORTED)."""


class IOFailure(DpdoError, OSError):
    """A file could not be read or written (DPDO_E_IO); also an OSError."""


class FormatError(DpdoError, ValueError):
    """A malformed file or string (DPDO_E_FORMAT); also a ValueError."""


class Canceled(DpdoError):
    """A run stopped by its progress callback (DPDO_E_CANCELED); the algorithm can continue."""


class MisuseError(StateError):
    """The C library found the handle busy with another call (DPDO_E_MISUSE; docs/abi.md "Misuse
    detection"): nothing was done. A StateError, like the binding's own busy check."""


_CLASSES = {E_INVAL: InvalidArgument, E_NOMEM: OutOfMemory, E_STATE: StateError, E_CALLBACK: CallbackError,
            E_NUMERIC: NumericError, E_BUDGET: BudgetError, E_VERSION: VersionError, E_UNSUPPORTED: Unsupported,
            E_IO: IOFailure, E_FORMAT: FormatError, E_CANCELED: Canceled, E_MISUSE: MisuseError}


def _status_name(status):
    return lib.dpdo_status_name(status).decode()


def error(status, message):
    """The exception for a status code."""
    return _CLASSES.get(status, DpdoError)(status, message)


# ---- prototypes (generated from the headers: python/dpdo/_capi.py, scripts/gen-python.py) ----------
P = C.c_void_p
I32, I64, U64, D, S = C.c_int32, C.c_int64, C.c_uint64, C.c_double, C.c_char_p
INT, SZ = C.c_int, C.c_size_t
PD, PI64, PI32, PP = C.POINTER(C.c_double), C.POINTER(C.c_int64), C.POINTER(C.c_int32), C.POINTER(C.c_void_p)

# name: (restype, [argtypes]) of every DPDO_API function of the headers this package was generated from
PROTOS = _capi.FUNCTIONS


def optional(name):
    """The C function `name`, or raise Unsupported naming the library that lacks it."""
    f = getattr(lib, name, None)
    if f is None:
        raise Unsupported(E_UNSUPPORTED, "%s has no %s (a newer libdpdo is needed)" % (LIBRARY_PATH, name))
    return f


def _set_prototypes():
    missing = []
    for name, (res, args) in PROTOS.items():
        f = getattr(lib, name, None)
        if f is None:
            missing.append(name)
            continue
        f.restype = res
        f.argtypes = args
    if missing:
        raise ImportError("dpdo: %s lacks %d function(s) of the headers this package was generated from (%s%s): "
                          "the library is older than this package (rebuild it, or point DPDO_LIBRARY at a current "
                          "build)" % (LIBRARY_PATH, len(missing), ", ".join(missing[:5]),
                                      ", ..." if len(missing) > 5 else ""))


_set_prototypes()


def text(b):
    """A C string (bytes or None) as str."""
    return b.decode("utf-8", "replace") if b is not None else ""


# ---- arrays -------------------------------------------------------------------------------------
def as_doubles(x, n=None, what="array"):
    """(keep-alive object, POINTER(c_double), length) for a 1-D or 2-D array of float64.

    NumPy arrays that are C-contiguous float64 are passed without a copy; anything else is copied
    (ascontiguousarray, or a ctypes array built from a plain sequence)."""
    if np is not None and not isinstance(x, C.Array):
        a = np.ascontiguousarray(x, dtype=np.float64)
        if n is not None and a.size != n:
            raise InvalidArgument(E_INVAL, "%s has %d values, expected %d" % (what, a.size, n))
        return a, a.ctypes.data_as(PD), a.size
    if isinstance(x, C.Array):
        return x, C.cast(x, PD), len(x)
    flat = []
    for v in x:
        if isinstance(v, (list, tuple)):
            flat.extend(float(u) for u in v)
        else:
            flat.append(float(v))
    if n is not None and len(flat) != n:
        raise InvalidArgument(E_INVAL, "%s has %d values, expected %d" % (what, len(flat), n))
    buf = (C.c_double * max(len(flat), 1))(*flat)
    return buf, C.cast(buf, PD), len(flat)


def _as_ints(x, ctype, ptype, npname):
    if np is not None:
        a = np.ascontiguousarray(x, dtype=getattr(np, npname))
        return a, a.ctypes.data_as(ptype), a.size
    vals = [int(v) for v in x]
    buf = (ctype * max(len(vals), 1))(*vals)
    return buf, C.cast(buf, ptype), len(vals)


def as_int64(x):
    """(keep-alive object, POINTER(c_int64), length)."""
    return _as_ints(x, C.c_int64, PI64, "int64")


def as_int32(x):
    """(keep-alive object, POINTER(c_int32), length)."""
    return _as_ints(x, C.c_int32, PI32, "int32")


def empty_doubles(n):
    """(result object, POINTER(c_double)): a NumPy array when available, else a ctypes array."""
    if np is not None:
        a = np.empty(n, dtype=np.float64)
        return a, a.ctypes.data_as(PD)
    buf = (C.c_double * max(n, 1))()
    return buf, C.cast(buf, PD)


def result(obj, n):
    """What a getter returns: the NumPy array itself, or a list without NumPy."""
    if np is not None:
        return obj
    return list(obj[:n])
