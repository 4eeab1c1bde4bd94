# SPDX-License-Identifier: BSD-3-Clause
"""Loading libdpdo, the C prototypes, errors and array conversion.

The library is found in this order (the first that loads wins; `LIBRARY_SOURCE` says which):

1. the environment variable DPDO_LIBRARY (a path; an error if it does not load);
2. the package's own copy: `dpdo/libdpdo.so.1` next to this file (a wheel that bundles it);
3. the build tree this package sits in: `<repo>/$BUILD/lib/libdpdo.so.1` (BUILD: "build");
4. `ctypes.util.find_library("dpdo")` (the loader cache, LD_LIBRARY_PATH);
5. the libdir of `pkg-config --variable=libdir dpdo` (honours PKG_CONFIG_PATH, so a
   `make install PREFIX=...` to any prefix is found);
6. the system loader by SONAME (libdpdo.so.1).

The ABI major of the loaded library must be ABI_MAJOR.
"""
import ctypes as C
import ctypes.util
import os
import subprocess
import sys
import warnings

ABI_MAJOR = 1
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


def _pkg_config_libdir():
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "dpdo"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    d = r.stdout.strip()
    return d if r.returncode == 0 and d else None


def _candidates():
    """(source, path) pairs in the search order of the module docstring."""
    env = os.environ.get("DPDO_LIBRARY")
    if env:
        yield "DPDO_LIBRARY", env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield "package", os.path.join(here, SONAME)
    repo = os.path.dirname(os.path.dirname(here))
    yield "build tree", os.path.join(repo, os.environ.get("BUILD", "build"), "lib", SONAME)
    found = ctypes.util.find_library("dpdo")
    if found:
        yield "find_library", found
    libdir = _pkg_config_libdir()
    if libdir:
        yield "pkg-config", os.path.join(libdir, SONAME)
    yield "loader", SONAME


def _load():
    tried = []
    for source, path in _candidates():
        if source in ("package", "build tree", "pkg-config") and not os.path.exists(path):
            tried.append("%s: %s (absent)" % (source, path))
            continue
        try:
            lib = C.CDLL(path)
        except OSError as e:
            if source == "DPDO_LIBRARY":
                raise ImportError("dpdo: DPDO_LIBRARY=%s cannot be loaded (%s)" % (path, e)) from e
            tried.append("%s: %s (%s)" % (source, path, e))
            continue
        lib.dpdo_abi_major.argtypes = []
        lib.dpdo_abi_major.restype = C.c_int
        abi = lib.dpdo_abi_major()
        if abi != ABI_MAJOR:
            raise ImportError("dpdo: %s has ABI %d, this package needs ABI %d" % (path, abi, ABI_MAJOR))
        return lib, path, source
    raise ImportError("dpdo: cannot find %s. Tried:\n  %s\nInstall libdpdo (`make install PREFIX=...`, then make "
                      "sure pkg-config finds dpdo.pc: PKG_CONFIG_PATH=<prefix>/lib/pkgconfig) or set DPDO_LIBRARY "
                      "to the path of %s." % (SONAME, "\n  ".join(tried), SONAME))


lib, LIBRARY_PATH, LIBRARY_SOURCE = _load()

# ---- status codes and errors ----------------------------------------------------------------------
OK, ROUND, DONE = 0, 1, 2
E_INVAL, E_NOMEM, E_STATE, E_CALLBACK, E_NUMERIC = -1, -2, -3, -4, -5
E_BUDGET, E_VERSION, E_UNSUPPORTED, E_IO, E_FORMAT = -6, -7, -8, -9, -10
E_CANCELED = -11


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


_CLASSES = {E_INVAL: InvalidArgument, E_NOMEM: OutOfMemory, E_STATE: StateError, E_CALLBACK: CallbackError,
            E_NUMERIC: NumericError, E_BUDGET: BudgetError, E_VERSION: VersionError, E_UNSUPPORTED: Unsupported,
            E_IO: IOFailure, E_FORMAT: FormatError, E_CANCELED: Canceled}


def _status_name(status):
    return lib.dpdo_status_name(status).decode()


def error(status, message):
    """The exception for a status code."""
    return _CLASSES.get(status, DpdoError)(status, message)


# ---- prototypes -----------------------------------------------------------------------------------
P = C.c_void_p
I32, I64, U64, D, S = C.c_int32, C.c_int64, C.c_uint64, C.c_double, C.c_char_p
INT, SZ = C.c_int, C.c_size_t
PD, PI64, PI32, PP = C.POINTER(C.c_double), C.POINTER(C.c_int64), C.POINTER(C.c_int32), C.POINTER(C.c_void_p)

# name: (restype, [argtypes])
PROTOS = {
    "dpdo_version_string": (S, []),
    "dpdo_version_number": (INT, []),
    "dpdo_status_name": (S, [INT]),
    "dpdo_strerror": (S, [INT]),
    # datasets and shards
    "dpdo_dataset_create": (INT, [PP]),
    "dpdo_dataset_destroy": (None, [P]),
    "dpdo_dataset_errmsg": (S, [P]),
    "dpdo_dataset_set_dense": (INT, [P, I64, I64, PD, PD, INT]),
    "dpdo_dataset_set_csr": (INT, [P, I64, I64, PI64, PI32, PD, PD, INT]),
    "dpdo_dataset_rows": (I64, [P]),
    "dpdo_dataset_features": (I64, [P]),
    "dpdo_dataset_nnz": (I64, [P]),
    "dpdo_dataset_get_labels": (INT, [P, PD, I64]),
    "dpdo_dataset_get_row": (INT, [P, I64, PD, I64]),
    "dpdo_dataset_layout": (INT, [P]),
    "dpdo_dataset_load_libsvm": (INT, [P, S, P]),
    "dpdo_dataset_load_idx": (INT, [P, S, S, P]),
    "dpdo_load_options_init": (INT, [P, SZ]),
    "dpdo_generate_options_init": (INT, [P, SZ]),
    "dpdo_dataset_generate": (INT, [P, S, P]),
    "dpdo_dataset_partition": (INT, [P, I64, PI64, U64, PP]),
    "dpdo_dataset_margins": (INT, [P, PD, I64, PD, I64]),
    "dpdo_shard_create_range": (INT, [PP, P, I64, I64]),
    "dpdo_shard_create": (INT, [PP, P, PI64, I64]),
    "dpdo_shard_destroy": (None, [P]),
    "dpdo_shard_rows": (I64, [P]),
    "dpdo_shard_get_rows": (INT, [P, PI64, I64]),
    "dpdo_shard_errmsg": (S, [P]),
    # losses, regularizers, nodes
    "dpdo_loss_type_find": (P, [S]),
    "dpdo_loss_create": (INT, [PP, P, P, I64]),
    "dpdo_loss_destroy": (None, [P]),
    "dpdo_loss_errmsg": (S, [P]),
    "dpdo_loss_dim": (I64, [P]),
    "dpdo_loss_name": (S, [P]),
    "dpdo_regularizer_type_find": (P, [S]),
    "dpdo_regularizer_create": (INT, [PP, P, P, I64, PD, I64]),
    "dpdo_regularizer_destroy": (None, [P]),
    "dpdo_regularizer_value": (INT, [P, PD, I64, PD]),
    "dpdo_regularizer_errmsg": (S, [P]),
    "dpdo_node_create": (INT, [PP, P, P, D]),
    "dpdo_node_create_remote": (INT, [PP, P, I64, D]),
    "dpdo_node_destroy": (None, [P]),
    "dpdo_node_errmsg": (S, [P]),
    "dpdo_node_samples": (I64, [P]),
    "dpdo_node_eval": (INT, [P, PD, I64, PI64, I64, D, PD, PD, PI64]),
    # networks
    "dpdo_network_create": (INT, [PP]),
    "dpdo_network_destroy": (None, [P]),
    "dpdo_network_errmsg": (S, [P]),
    "dpdo_network_set_complete": (INT, [P, I64]),
    "dpdo_network_set_ring": (INT, [P, I64]),
    "dpdo_network_set_circulant": (INT, [P, I64, I64]),
    "dpdo_network_set_torus": (INT, [P, I64, I64]),
    "dpdo_network_set_star": (INT, [P, I64]),
    "dpdo_network_set_erdos_renyi": (INT, [P, I64, D, U64, I64]),
    "dpdo_network_set_edges": (INT, [P, I64, PI64, I64]),
    "dpdo_network_nodes": (I64, [P]),
    "dpdo_network_edge_count": (I64, [P]),
    "dpdo_network_spectral_gap": (INT, [P, PD]),
    # privacy
    "dpdo_sampling_create": (INT, [PP]),
    "dpdo_sampling_destroy": (None, [P]),
    "dpdo_sampling_errmsg": (S, [P]),
    "dpdo_sampling_set_none": (INT, [P]),
    "dpdo_sampling_set_poisson": (INT, [P, D]),
    "dpdo_sampling_set_wor": (INT, [P, I64, I64]),
    "dpdo_event_create": (INT, [PP]),
    "dpdo_event_destroy": (None, [P]),
    "dpdo_event_errmsg": (S, [P]),
    "dpdo_event_set_gaussian": (INT, [P, P, D, D]),
    "dpdo_event_set_laplace": (INT, [P, P, D, D]),
    "dpdo_ledger_create": (INT, [PP, I64]),
    "dpdo_ledger_destroy": (None, [P]),
    "dpdo_ledger_errmsg": (S, [P]),
    "dpdo_ledger_nodes": (I64, [P]),
    "dpdo_ledger_charges": (I64, [P, I64]),
    "dpdo_ledger_charge": (INT, [P, P, I64, PI64, I64]),
    "dpdo_ledger_reset": (INT, [P]),
    "dpdo_ledger_save": (INT, [P, C.c_char_p, I64, PI64]),
    "dpdo_ledger_load": (INT, [P, C.c_char_p, I64]),
    "dpdo_accountant_type_find": (P, [S]),
    "dpdo_accountant_type_next": (P, [P]),
    "dpdo_accountant_type_name": (S, [P]),
    "dpdo_accountant_options_init": (INT, [P, SZ]),
    "dpdo_accountant_create": (INT, [PP, P, P, P, P]),
    "dpdo_accountant_destroy": (None, [P]),
    "dpdo_accountant_errmsg": (S, [P]),
    "dpdo_accountant_name": (S, [P]),
    "dpdo_accountant_epsilon": (INT, [P, I64, D, PD, PD]),
    "dpdo_accountant_delta": (INT, [P, I64, D, PD]),
    "dpdo_accountant_calibrate_sigma": (INT, [P, P, D, D, D, D, PD]),
    "dpdo_accountant_calibrate_steps": (INT, [P, P, D, D, D, D, PD]),
    "dpdo_paper_type_find": (P, [S]),
    "dpdo_paper_type_next": (P, [P]),
    "dpdo_paper_type_name": (S, [P]),
    "dpdo_paper_type_title": (S, [P]),
    "dpdo_paper_type_param": (S, [P, INT]),
    "dpdo_paper_type_output": (S, [P, INT]),
    "dpdo_paper_create": (INT, [PP, P]),
    "dpdo_paper_destroy": (None, [P]),
    "dpdo_paper_errmsg": (S, [P]),
    "dpdo_paper_set": (INT, [P, S, D]),
    "dpdo_paper_evaluate": (INT, [P]),
    "dpdo_paper_valid": (INT, [P]),
    "dpdo_paper_violations": (S, [P]),
    "dpdo_paper_get": (INT, [P, S, PD]),
    # local solvers, compressors, policies
    "dpdo_solver_type_find": (P, [S]),
    "dpdo_solver_create": (INT, [PP, P, P, I64]),
    "dpdo_solver_destroy": (None, [P]),
    "dpdo_solver_errmsg": (S, [P]),
    "dpdo_solver_set": (INT, [P, S, D]),
    "dpdo_solver_get": (INT, [P, S, PD]),
    "dpdo_compressor_type_find": (P, [S]),
    "dpdo_compressor_create": (INT, [PP, P, P, I64]),
    "dpdo_compressor_destroy": (None, [P]),
    "dpdo_compressor_errmsg": (S, [P]),
    "dpdo_compressor_set_k": (INT, [P, I64]),
    "dpdo_policy_type_find": (P, [S]),
    "dpdo_policy_create": (INT, [PP, P, P, I64, I64]),
    "dpdo_policy_destroy": (None, [P]),
    "dpdo_policy_errmsg": (S, [P]),
    "dpdo_policy_set": (INT, [P, S, D]),
    # algorithms
    "dpdo_algorithm_type_find": (P, [S]),
    "dpdo_algorithm_type_next": (P, [P]),
    "dpdo_algorithm_type_name": (S, [P]),
    "dpdo_algorithm_type_title": (S, [P]),
    "dpdo_algorithm_options_init": (INT, [P, SZ]),
    "dpdo_algorithm_create": (INT, [PP, P]),
    "dpdo_algorithm_setup": (INT, [P, PP, I64, P, P, P, P]),
    "dpdo_algorithm_prepare": (INT, [P]),
    "dpdo_algorithm_destroy": (None, [P]),
    "dpdo_algorithm_errmsg": (S, [P]),
    "dpdo_algorithm_name": (S, [P]),
    "dpdo_algorithm_state": (INT, [P]),
    "dpdo_algorithm_nodes": (I64, [P]),
    "dpdo_algorithm_dim": (I64, [P]),
    "dpdo_algorithm_set_int": (INT, [P, INT, I64]),
    "dpdo_algorithm_set_double": (INT, [P, INT, D]),
    "dpdo_algorithm_get_int": (INT, [P, INT, PI64]),
    "dpdo_algorithm_get_double": (INT, [P, INT, PD]),
    "dpdo_param_type": (INT, [INT]),
    "dpdo_param_name": (S, [INT]),
    "dpdo_algorithm_set_solver": (INT, [P, P]),
    "dpdo_algorithm_set_compressor": (INT, [P, P]),
    "dpdo_algorithm_set_policy": (INT, [P, P]),
    "dpdo_algorithm_set_node_secret": (INT, [P, I64, U64]),
    "dpdo_algorithm_set_next_active": (INT, [P, PI32, I64]),
    "dpdo_algorithm_set_node_probabilities": (INT, [P, PD, I64]),
    "dpdo_algorithm_step": (INT, [P]),
    "dpdo_algorithm_run": (INT, [P, I64, PI64]),
    "dpdo_algorithm_reset": (INT, [P]),
    "dpdo_algorithm_round": (I64, [P]),
    "dpdo_algorithm_stop_reason": (INT, [P]),
    "dpdo_algorithm_set_progress": (INT, [P, P, P, I64, I32]),
    "dpdo_algorithm_get_iterate": (INT, [P, I64, PD, I64]),
    "dpdo_algorithm_get_output": (INT, [P, I64, PD, I64]),
    "dpdo_algorithm_get_state": (INT, [P, S, I64, PD, I64]),
    "dpdo_algorithm_get_active": (INT, [P, PI32, I64]),
    "dpdo_algorithm_privacy": (INT, [P, INT, I64, PD, PD, PI32]),
    "dpdo_algorithm_privacy_source": (S, [P, INT]),
    "dpdo_algorithm_privacy_notes": (S, [P]),
    "dpdo_algorithm_randomness_source": (S, [P]),
    "dpdo_algorithm_set_node_key": (INT, [P, I64, C.c_char_p]),
    "dpdo_algorithm_planned_releases": (INT, [P, I64, PI64]),
    "dpdo_algorithm_comm": (INT, [P, I64, PI64, PI64, PI64]),
    "dpdo_algorithm_objective": (INT, [P, INT, I64, PD]),
    "dpdo_algorithm_objective_at": (INT, [P, PD, I64, PD]),
    # model files
    "dpdo_model_create": (INT, [PP]),
    "dpdo_model_destroy": (None, [P]),
    "dpdo_model_errmsg": (S, [P]),
    "dpdo_model_from_algorithm": (INT, [P, P]),
    "dpdo_model_set": (INT, [P, PD, I64, S, S]),
    "dpdo_model_save": (INT, [P, S]),
    "dpdo_model_load": (INT, [P, S]),
    "dpdo_model_parse": (INT, [P, S, SZ, S]),
    "dpdo_model_dim": (I64, [P]),
    "dpdo_model_rounds": (I64, [P]),
    "dpdo_model_get_x": (INT, [P, PD, I64]),
    "dpdo_model_text": (S, [P, S]),
    "dpdo_model_regularizer_params": (INT, [P, PD, PD]),
    "dpdo_model_privacy": (INT, [P, PD, PD]),
    "dpdo_model_predict": (INT, [P, P, INT, PD, I64]),
    # reference solver
    "dpdo_reference_options_init": (INT, [P, SZ]),
    "dpdo_reference_create": (INT, [PP, PP, I64, P, P]),
    "dpdo_reference_destroy": (None, [P]),
    "dpdo_reference_errmsg": (S, [P]),
    "dpdo_reference_solve": (INT, [P, PD, I64, PD]),
    "dpdo_reference_objective": (INT, [P, PD, I64, PD]),
    "dpdo_reference_certificate": (D, [P]),
    "dpdo_reference_iterations": (I64, [P]),
    "dpdo_reference_method": (S, [P]),
}

# functions of newer libraries (the package works without them; the wrappers say what is missing)
OPTIONAL_PROTOS = {}


def optional(name):
    """The optional C function `name`, or raise Unsupported naming the library that lacks it."""
    f = getattr(lib, name, None)
    if f is None:
        raise Unsupported(E_UNSUPPORTED, "%s has no %s (a newer libdpdo is needed)" % (LIBRARY_PATH, name))
    return f


for _name, (_res, _args) in OPTIONAL_PROTOS.items():
    _f = getattr(lib, _name, None)
    if _f is not None:
        _f.restype = _res
        _f.argtypes = _args

for _name, (_res, _args) in PROTOS.items():
    try:
        _f = getattr(lib, _name)
    except AttributeError as _e:
        raise ImportError("dpdo: %s has no %s: the library is older than this package (rebuild it, or point "
                          "DPDO_LIBRARY at a current build)" % (LIBRARY_PATH, _name)) from _e
    _f.restype = _res
    _f.argtypes = _args


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
