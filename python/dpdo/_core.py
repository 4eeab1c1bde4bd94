# SPDX-License-Identifier: BSD-3-Clause
"""Pythonic classes over the libdpdo handles.

Lifetime: every class owns one C handle, freed by close() (idempotent), by the context manager,
or by a finalizer when the object is collected. Objects that C borrows are kept alive by the
Python objects that borrow them: a Node holds its Dataset/Shard and Loss, an Algorithm holds its
nodes, network, regularizer, accountant, solver, compressor and policy. Closing an object that
something still borrows is deferred: it is freed when its last borrower is closed (so nested
`with` blocks close in a safe order whatever order they exit in).

Threads: one handle is used by one thread at a time. Every call that reaches C on a handle takes
a per-handle guard; a second thread calling into the same handle meanwhile gets StateError
(instead of corrupting memory), close() from another thread waits for the running call (an
Algorithm's run() is asked to stop at the next round first), and exceptions raised in Python
callbacks are kept per thread. The GIL is released during C calls, so separate handles in
separate threads run in parallel.
"""
import ctypes as C
import functools
import logging
import math
import os
import signal
import threading
import time
import weakref
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import _capi, _lib
from ._lib import (lib, np, P, PD, PI64, PI32, I64, D, DpdoError, StateError, InvalidArgument, CallbackError,
                   error, text, as_doubles, as_int64, as_int32, empty_doubles, result)

# the C constants (generated from the headers, python/dpdo/_capi.py) without their DPDO_ prefix
NODE_ALL, NODE_COORDINATOR = _capi.DPDO_NODE_ALL, _capi.DPDO_NODE_COORDINATOR
NOISE_NONE, NOISE_PAPER, NOISE_RIGOROUS, NOISE_FIXED = (_capi.DPDO_NOISE_NONE, _capi.DPDO_NOISE_PAPER,
                                                      _capi.DPDO_NOISE_RIGOROUS, _capi.DPDO_NOISE_FIXED)
RANDOMNESS_SECURE, RANDOMNESS_REPRODUCIBLE = _capi.DPDO_RANDOMNESS_SECURE, _capi.DPDO_RANDOMNESS_REPRODUCIBLE
PRIVACY_RIGOROUS, PRIVACY_PAPER = _capi.DPDO_PRIVACY_RIGOROUS, _capi.DPDO_PRIVACY_PAPER
POINT_ITERATE, POINT_OUTPUT = _capi.DPDO_POINT_ITERATE, _capi.DPDO_POINT_OUTPUT
WEIGHT_SAMPLES, WEIGHT_NODES, WEIGHT_NODE_WEIGHTS = (_capi.DPDO_WEIGHT_SAMPLES, _capi.DPDO_WEIGHT_NODES,
                                                     _capi.DPDO_WEIGHT_NODE_WEIGHTS)
PROGRESS_EPSILON, PROGRESS_OBJECTIVE = _capi.DPDO_PROGRESS_EPSILON, _capi.DPDO_PROGRESS_OBJECTIVE
LOG_DEBUG, LOG_INFO, LOG_NOTE, LOG_WARN, LOG_ERROR = (_capi.DPDO_LOG_DEBUG, _capi.DPDO_LOG_INFO, _capi.DPDO_LOG_NOTE,
                                                     _capi.DPDO_LOG_WARN, _capi.DPDO_LOG_ERROR)
STATE_NAMES = {_capi.DPDO_ALG_EMPTY: "EMPTY", _capi.DPDO_ALG_READY: "READY", _capi.DPDO_ALG_RUNNING: "RUNNING",
               _capi.DPDO_ALG_DONE: "DONE", _capi.DPDO_ALG_FAILED: "FAILED"}
STOP_NAMES = {_capi.DPDO_STOP_NONE: "none", _capi.DPDO_STOP_MAX_ROUNDS: "max rounds", _capi.DPDO_STOP_BUDGET: "budget",
              _capi.DPDO_STOP_TOLERANCE: "tolerance", _capi.DPDO_STOP_PASSES: "passes complete"}


def version() -> str:
    """The loaded library's version string ("0.2.0")."""
    return text(lib.dpdo_version_string())


def _free_handle(destroy, h):
    if h.value:
        destroy(h)
        h.value = None


class _Handle:
    """Base of every class: owns self._h (a c_void_p), destroyed by `_destroy` exactly once.

    Also the per-handle thread guard (_enter/_leave), the borrow counts that defer close(), and
    the generic __repr__ ("<dpdo.Name details>")."""

    _destroy = None
    _errmsg = None

    def __init__(self):
        self._h = C.c_void_p()
        self._borrowers = 0
        self._deps = []
        self._fin = None
        self._lock = threading.Lock()
        self._owner = None
        self._close_pending = False
        self._cancel_requested = False
        self._in_c = False

    def _own(self):
        self._fin = weakref.finalize(self, _free_handle, type(self)._destroy, self._h)

    # -- thread guard ----------------------------------------------------------------------------
    def _enter(self, what, mutating=True):
        """Take the handle for a call; returns True if the lock was taken (pass it to _leave).
        A nested read-only call on the thread that holds the handle (e.g. a getter inside a
        progress callback) goes through without the lock; anything else while the handle is
        busy raises StateError."""
        me = (threading.get_ident(), threading.current_thread().name, what)  # no call after the acquire
        if self._lock.acquire(False):
            self._owner = me
            return True
        own = self._owner
        if own is not None and own[0] == threading.get_ident():
            if not (mutating and self._in_c):
                return False
            raise StateError(_lib.E_STATE, "%s.%s() called inside %s() on the same thread (from a callback): "
                             "not allowed" % (type(self).__name__, what, own[2]))
        raise StateError(_lib.E_STATE, "%s.%s(): the handle is busy with %s() in thread %r; one handle is used by "
                         "one thread at a time (give each thread its own object, or serialise the calls)"
                         % (type(self).__name__, what, own[2] if own else "a call", own[1] if own else "?"))

    def _leave(self, took):
        if took:
            self._owner = None
            self._lock.release()

    def _call(self, what, fn, *args, mutating=True):
        """fn(handle, *args) under the guard; returns its status (not checked)."""
        took = self._enter(what, mutating)
        try:
            return fn(self._ptr(), *args)
        finally:
            self._leave(took)

    @property
    def handle(self) -> int:
        """The raw C pointer (int); raises ValueError after close()."""
        return self._ptr().value

    def _ptr(self):
        if not self._h.value or self._close_pending:
            raise ValueError("%s is closed" % type(self).__name__)
        return self._h

    def message(self) -> str:
        """The handle's message about its last failure ("" if none or closed)."""
        if not self._h.value or type(self)._errmsg is None:
            return ""
        return text(type(self)._errmsg(self._h))

    def _check(self, rc, what=""):
        if rc < 0:
            raise error(rc, self.message() or what or _lib._status_name(rc))
        return rc

    def close(self) -> None:
        """Free the C handle (safe to call twice). If other objects still borrow this one (a Node
        its Loss, an Algorithm its Accountant, ...), the handle is freed when the last of them is
        closed or collected; the object counts as closed at once. If another thread is inside a
        call on this handle, close() waits for it (an Algorithm.run() is first asked to stop at
        the next round); from inside a callback of this handle's own call it raises StateError."""
        if not self._h.value:
            return
        if self._borrowers > 0:
            self._close_pending = True
            return
        own = self._owner
        mine = own is not None and own[0] == threading.get_ident()
        if mine and self._in_c:
            raise StateError(_lib.E_STATE, "%s.close() called inside %s() on the same thread (from a callback)"
                             % (type(self).__name__, own[2]))
        self._cancel_requested = True
        if not mine:  # (mine: this thread already holds the guard, e.g. after a KeyboardInterrupt)
            self._lock.acquire()
        try:
            if self._fin is not None:
                self._fin()
            self._release_deps()
        finally:
            if not mine:
                self._lock.release()

    def _release_deps(self):
        deps, self._deps = self._deps, []
        for d in deps:
            d._borrowers -= 1
            if d._close_pending and d._borrowers == 0:
                d._close_pending = False
                d.close()

    def _borrow(self, *objs):
        for o in objs:
            if o is not None:
                o._borrowers += 1
                self._deps.append(o)

    @property
    def closed(self) -> bool:
        """True after close() (even while a borrower keeps the C handle alive)."""
        return not self._h.value or self._close_pending

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        # free our handle first (C may read what we borrow while destroying), then release borrows
        try:
            if getattr(self, "_fin", None) is not None:
                self._fin()
            self._release_deps()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass

    def _describe(self):
        return ""

    def __repr__(self):
        name = "dpdo.%s" % type(self).__name__
        if self.closed:
            return "<%s closed>" % name
        try:
            d = self._describe()
        except Exception:  # noqa: BLE001 - repr must not fail (e.g. busy in another thread)
            d = "busy"
        return "<%s %s>" % (name, d) if d else "<%s>" % name

    def __reduce__(self):
        raise TypeError("dpdo.%s cannot be pickled%s" % (type(self).__name__, self._why_not_picklable()))

    def _why_not_picklable(self):
        return ""


def _guarded(what=None, mutating=True):
    """Decorator: run the method under the handle's thread guard (see _Handle._enter)."""
    def deco(fn):
        name = what or fn.__name__

        @functools.wraps(fn)
        def w(self, *a, **k):
            took = self._enter(name, mutating)
            try:
                return fn(self, *a, **k)
            finally:
                self._leave(took)
        return w
    return deco


def _new(fn, what, *args):
    h = C.c_void_p()
    rc = fn(C.byref(h), *args)
    if rc < 0:
        raise error(rc, what)
    return h


# ---- options structs (layouts generated from the C headers) --------------------------------------
_GenerateOptions = _capi.dpdo_generate_options
_LoadOptions = _capi.dpdo_load_options
_AlgorithmOptions = _capi.dpdo_algorithm_options
_AccountantOptions = _capi.dpdo_accountant_options
_CheckpointOptions = _capi.dpdo_checkpoint_options


def _field_type(struct_cls, name):
    """The ctypes type of a field of a generated struct (the callback types of the C headers)."""
    return dict(struct_cls._fields_)[name]


def _option_names(struct_cls):
    """The settable fields of a generated options struct (not struct_size, not reserved space)."""
    return [k for k, _ in struct_cls._fields_ if k != "struct_size" and not k.startswith("reserved")]


def _fill(struct_cls, init, kwargs, what):
    o = struct_cls()
    rc = init(C.byref(o), C.sizeof(o))
    if rc < 0:
        raise error(rc, "%s: this package's struct does not match the library (%s)" % (what, _lib._status_name(rc)))
    names = _option_names(struct_cls)
    for k, v in kwargs.items():
        if k not in names:
            raise InvalidArgument(_lib.E_INVAL, "%s: unknown option %r" % (what, k))
        setattr(o, k, v)
    return o


# ---- data ----------------------------------------------------------------------------------------
def _restore_dataset(state):
    ds = Dataset()
    if state["layout"] == "csr":
        ds._set_csr(state["n"], state["d"], state["indptr"], state["indices"], state["data"], state["y"])
    elif state["n"] > 0:
        X = state["X"]
        if np is not None:
            X = np.asarray(X, dtype=np.float64).reshape(state["n"], state["d"])
        else:
            d = state["d"]
            X = [list(X[i * d:(i + 1) * d]) for i in range(state["n"])]
        ds.set_dense(X, state["y"])
    return ds


def _is_int(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    return np is not None and isinstance(x, np.integer)


class Dataset(_Handle):
    """Samples (rows) with labels, copied into C memory.

    Dataset(X, y) copies a 2-D float array (NumPy, or a list of rows) and labels y;
    Dataset.csr(matrix, y) takes a SciPy CSR matrix (or indptr/indices/data arrays);
    Dataset.libsvm(path), Dataset.idx(images, labels) and Dataset.generate(kind, ...) load or
    synthesise one. partition(k) or partition([sizes]) splits the rows over nodes; shard(first,
    count) takes a contiguous range. Datasets pickle (their rows and labels are copied)."""

    _destroy = lib.dpdo_dataset_destroy
    _errmsg = lib.dpdo_dataset_errmsg

    def __init__(self, X=None, y=None):
        super().__init__()
        self._h = _new(lib.dpdo_dataset_create, "dataset: out of memory")
        self._own()
        if X is not None:
            self.set_dense(X, y)

    @_guarded()
    def set_dense(self, X, y) -> "Dataset":
        """Replace the contents by a dense n x d matrix X and n labels y (both copied); returns self."""
        if np is not None:
            Xa = np.ascontiguousarray(X, dtype=np.float64)
            if Xa.ndim != 2:
                raise InvalidArgument(_lib.E_INVAL, "X must be 2-D (rows x features), got %d-D" % Xa.ndim)
            n, d = Xa.shape
        else:
            try:
                rows = [list(r) for r in X]
            except TypeError:
                raise InvalidArgument(_lib.E_INVAL, "X must be 2-D (a sequence of rows)") from None
            n, d = len(rows), len(rows[0]) if rows else 0
            if any(len(r) != d for r in rows):
                raise InvalidArgument(_lib.E_INVAL, "X: rows of different lengths")
            Xa = rows
        if y is None:
            raise InvalidArgument(_lib.E_INVAL, "y (one label per row) is required")
        keep, px, nx = as_doubles(Xa, n * d, "X")
        keepy, py, ny = as_doubles(y, n, "y")
        self._check(lib.dpdo_dataset_set_dense(self._ptr(), n, d, px, py, _capi.DPDO_COPY))
        return self

    @_guarded()
    def _set_csr(self, n, d, indptr, indices, data, y):
        k1, pr, _ = as_int64(indptr)
        k2, pc, _ = as_int32(indices)
        k3, pv, _ = as_doubles(data)
        k4, py, _ = as_doubles(y, n, "y")
        self._check(lib.dpdo_dataset_set_csr(self._ptr(), n, d, pr, pc, pv, py, _capi.DPDO_COPY))

    @classmethod
    def csr(cls, matrix=None, y=None, indptr=None, indices=None, data=None, n_features=None) -> "Dataset":
        """From a SciPy sparse matrix (converted to CSR) or its three CSR arrays and n_features."""
        if matrix is not None:
            m = matrix.tocsr()
            indptr, indices, data, shape = m.indptr, m.indices, m.data, m.shape
            n, d = shape
        else:
            if indptr is None or n_features is None:
                raise InvalidArgument(_lib.E_INVAL, "Dataset.csr: give a matrix, or indptr, indices, data and "
                                      "n_features")
            n, d = len(indptr) - 1, n_features
        ds = cls()
        ds._set_csr(n, d, indptr, indices, data, y)
        return ds

    @classmethod
    def libsvm(cls, path, binary_labels=True, n_features=0) -> "Dataset":
        """Load a LIBSVM/SVMlight file (gzip allowed); binary_labels maps two classes to -1/+1."""
        ds = cls()
        o = _fill(_LoadOptions, lib.dpdo_load_options_init, {}, "load options")
        o.label_map = 1 if binary_labels else 0
        o.n_features = n_features
        ds._check(lib.dpdo_dataset_load_libsvm(ds._ptr(), str(path).encode(), C.byref(o)))
        return ds

    @classmethod
    def idx(cls, images, labels) -> "Dataset":
        """Load an IDX image/label file pair (MNIST, Fashion-MNIST; gzip allowed); labels are the digits."""
        ds = cls()
        ds._check(lib.dpdo_dataset_load_idx(ds._ptr(), str(images).encode(), str(labels).encode(), None))
        return ds

    @classmethod
    def generate(cls, kind="epsilon-like", n=1000, d=100, seed=1, **options) -> "Dataset":
        """A seeded synthetic set ("epsilon-like", "rcv1-like", "fedplt-logistic", "covtype-like")."""
        ds = cls()
        o = _fill(_GenerateOptions, lib.dpdo_generate_options_init, dict(options, n=n, d=d, seed=seed),
                  "generate options")
        ds._check(lib.dpdo_dataset_generate(ds._ptr(), kind.encode(), C.byref(o)))
        return ds

    @property
    def rows(self) -> int:
        """Number of samples n."""
        return lib.dpdo_dataset_rows(self._ptr())

    @property
    def features(self) -> int:
        """Number of features d."""
        return lib.dpdo_dataset_features(self._ptr())

    @property
    def layout(self) -> str:
        """"dense", "csr" or "empty"."""
        return {_capi.DPDO_LAYOUT_EMPTY: "empty", _capi.DPDO_LAYOUT_DENSE: "dense",
                _capi.DPDO_LAYOUT_CSR: "csr"}.get(lib.dpdo_dataset_layout(self._ptr()), "?")

    @_guarded(mutating=False)
    def labels(self):
        """The n labels (a NumPy array, or a list without NumPy)."""
        n = self.rows
        out, p = empty_doubles(n)
        self._check(lib.dpdo_dataset_get_labels(self._ptr(), p, n))
        return result(out, n)

    @_guarded(mutating=False)
    def row(self, i):
        """Row i as a dense vector of d values."""
        d = self.features
        out, p = empty_doubles(d)
        self._check(lib.dpdo_dataset_get_row(self._ptr(), i, p, d))
        return result(out, d)

    @_guarded(mutating=False)
    def margins(self, w):
        """X w: one margin per row for a weight vector w of d values."""
        n, d = self.rows, self.features
        kw, pw, _ = as_doubles(w, d, "w")
        out, p = empty_doubles(n)
        self._check(lib.dpdo_dataset_margins(self._ptr(), pw, d, p, n))
        return result(out, n)

    @_guarded()
    def partition(self, sizes, seed=0) -> "List[Shard]":
        """Random disjoint shards: partition(k) gives k shards of equal size (n // k rows, the first
        n % k shards one more: every row is used); partition([q1, q2, ...]) gives shards of those
        sizes (their sum may be less than n). Any other scalar (a float, a bool) is refused."""
        if _is_int(sizes):
            k, n = int(sizes), self.rows
            if k < 1 or k > n:
                raise InvalidArgument(_lib.E_INVAL, "partition(%d): the number of shards must be in 1..%d (rows)"
                                      % (k, n))
            sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        elif isinstance(sizes, (bool, float, str, bytes)) or (np is not None and np.ndim(sizes) == 0):
            raise InvalidArgument(_lib.E_INVAL, "partition(%r): give an int k (k equal shards) or a sequence of "
                                  "shard sizes" % (sizes,))
        k, ps, m = as_int64(sizes)
        arr = (C.c_void_p * max(m, 1))()
        self._check(lib.dpdo_dataset_partition(self._ptr(), m, ps, seed, arr))
        return [Shard._wrap(arr[i], self) for i in range(m)]

    @_guarded()
    def shard(self, first, count) -> "Shard":
        """Rows first .. first+count-1 as a Shard."""
        h = C.c_void_p()
        self._check(lib.dpdo_shard_create_range(C.byref(h), self._ptr(), first, count))
        return Shard._wrap(h.value, self)

    @_guarded()
    def subset(self, rows) -> "Shard":
        """The given dataset rows (a sequence of row indices) as a Shard."""
        k, pr, m = as_int64(rows)
        h = C.c_void_p()
        self._check(lib.dpdo_shard_create(C.byref(h), self._ptr(), pr, m))
        return Shard._wrap(h.value, self)

    @_guarded(mutating=False)
    def _state(self):
        n, d = self.rows, self.features
        y = self.labels()
        st = {"n": n, "d": d, "y": y, "layout": self.layout}
        if st["layout"] == "csr":
            indptr, indices, data = [0], [], []
            for i in range(n):
                r = self.row(i)
                for j in range(d):
                    if r[j] != 0.0:
                        indices.append(j)
                        data.append(r[j])
                indptr.append(len(indices))
            st.update(indptr=indptr, indices=indices, data=data)
        else:
            rows = [self.row(i) for i in range(n)]
            st["X"] = np.concatenate(rows) if np is not None and rows else [v for r in rows for v in r]
        return st

    def __reduce__(self):
        return (_restore_dataset, (self._state(),))

    def _describe(self):
        return "%d x %d %s" % (self.rows, self.features, self.layout)


def _restore_shard(ds, rows):
    return ds.subset(rows)


class Shard(_Handle):
    """A view of some rows of a Dataset (keeps the dataset alive); made by Dataset.partition,
    Dataset.shard or Dataset.subset. Pickles with its dataset."""

    _destroy = lib.dpdo_shard_destroy
    _errmsg = lib.dpdo_shard_errmsg

    @classmethod
    def _wrap(cls, ptr, ds):
        s = cls.__new__(cls)
        _Handle.__init__(s)
        s._h = C.c_void_p(ptr)
        s._own()
        s._borrow(ds)
        s.dataset = ds
        return s

    @property
    def rows(self) -> int:
        """Number of rows in the shard."""
        return lib.dpdo_shard_rows(self._ptr())

    def row_indices(self):
        """The dataset row indices of the shard (a list of ints)."""
        m = self.rows
        buf = (C.c_int64 * max(m, 1))()
        self._check(lib.dpdo_shard_get_rows(self._ptr(), buf, m))
        return list(buf[:m])

    def __reduce__(self):
        return (_restore_shard, (self.dataset, self.row_indices()))

    def _describe(self):
        return "%d rows of %r" % (self.rows, self.dataset)


# ---- losses, regularizers, nodes -----------------------------------------------------------------
_LossType = _capi.dpdo_loss_type
_PHI = _field_type(_LossType, "phi")
_BATCH = _field_type(_LossType, "batch")
_MODEL = _field_type(_LossType, "model")
_BOUNDS = _field_type(_LossType, "phi_bounds")
_CONST = _field_type(_LossType, "constants")
_RELEASE = _field_type(_LossType, "release")


class _Callbacks:
    """Python callbacks called from C: an exception is stored and the callback returns 1, which the
    library turns into DPDO_E_CALLBACK; the wrapper then re-raises it. Exceptions are kept per
    thread (a Loss shared by two threads reports each thread's own exception to that thread)."""

    def __init__(self):
        self._tls = threading.local()

    @property
    def exc(self):
        """The exception stored by this thread's last failed callback (or None)."""
        return getattr(self._tls, "exc", None)

    def guard(self, fn):
        """Wrap fn for C: exceptions are stored (first one wins per thread) and 1 is returned."""
        tls = self._tls

        def call(*args):
            try:
                return int(fn(*args) or 0)
            except BaseException as e:  # noqa: B902 - every exception must stop at the C boundary
                if getattr(tls, "exc", None) is None:
                    tls.exc = e
                return 1
        return call

    def clear(self):
        """Forget this thread's stored exception."""
        self._tls.exc = None

    def reraise(self, err):
        """Raise err from this thread's stored exception (if any), clearing it."""
        e = self.exc
        self._tls.exc = None
        if e is not None:
            raise err from e

    def __repr__(self):
        return "<dpdo callbacks, exception in this thread: %r>" % (self.exc,)


_LOSS_NAMES = ("hinge", "logistic", "squared")


class Loss(_Handle):
    """A per-sample loss. Loss("logistic", dim) / Loss("hinge", dim) / Loss("squared", dim) are
    built in. User losses: Loss.phi(f, dim) with f(margin, label) -> (loss, dloss) for linear
    models, or Loss.batch(f, dim) with f(x, rows) -> (loss_sum, grad_sum) over dataset rows
    (x and grad_sum are float arrays of length dim). Built-in losses pickle; Python losses do not
    (their functions may be closures). A loss may be shared by nodes used in several threads;
    an exception raised in a Python loss reaches the thread whose call raised it."""

    _destroy = lib.dpdo_loss_destroy
    _errmsg = lib.dpdo_loss_errmsg

    def __init__(self, name="logistic", dim=1):
        super().__init__()
        self.cb = None
        t = lib.dpdo_loss_type_find(name.encode())
        if not t:
            raise InvalidArgument(_lib.E_INVAL, "unknown loss %r (built in: hinge, logistic, squared)" % name)
        self._h = _new(lib.dpdo_loss_create, "loss: invalid dimension %d or out of memory" % dim, t, None, dim)
        self._own()
        self._args = (name, dim)

    @classmethod
    def _user(cls, name, dim, **fields):
        obj = cls.__new__(cls)
        _Handle.__init__(obj)
        obj.cb = _Callbacks()
        obj._args = None
        t = _LossType()
        t.struct_size = C.sizeof(t)
        obj._name = name.encode()
        t.name = obj._name
        for k, v in fields.items():
            setattr(t, k, v)
        obj._type = t
        obj._keep = fields  # the CFUNCTYPE objects must live as long as the handle
        obj._h = _new(lib.dpdo_loss_create, "loss %r: invalid type or dimension" % name, C.byref(t), None, dim)
        obj._own()
        return obj

    @classmethod
    def phi(cls, fn, dim, name="python-phi", bound=None) -> "Loss":
        """A linear-model loss from fn(margin, label) -> (loss, dloss). bound (optional): sup |phi'|
        for the privacy checks."""
        cb = _Callbacks()

        def phi(user, m, y, pl, pd):
            v, g = fn(m, y)
            pl[0] = v
            pd[0] = g
            return 0
        fields = {"phi": _PHI(cb.guard(phi))}
        if bound is not None:
            def bounds(user, mb, yb, d1, d2):
                d1[0] = bound
                d2[0] = math.inf
                return 0
            fields["phi_bounds"] = _BOUNDS(cb.guard(bounds))
        obj = cls._user(name, dim, **fields)
        obj.cb = cb
        return obj

    @classmethod
    def batch(cls, fn, dim, name="python-batch") -> "Loss":
        """A loss from fn(x, rows) -> (loss_sum, grad_sum or None): rows are dataset row indices."""
        cb = _Callbacks()

        def batch(user, px, dim_, prows, m, ploss, pgrad):
            x = _view(px, dim_)
            rows = _view(prows, m)
            v, g = fn(x, rows)
            ploss[0] = v
            if pgrad:
                for k, gk in enumerate(g):
                    pgrad[k] += gk
            return 0
        obj = cls._user(name, dim, batch=_BATCH(cb.guard(batch)))
        obj.cb = cb
        return obj

    @property
    def dim(self) -> int:
        """The model dimension."""
        return lib.dpdo_loss_dim(self._ptr())

    @property
    def name(self) -> str:
        """The loss type's name."""
        return text(lib.dpdo_loss_name(self._ptr()))

    def __reduce__(self):
        if self._args is None:
            raise TypeError("dpdo.Loss %r cannot be pickled: it calls Python functions (pickle the estimator, "
                            "or rebuild the loss after unpickling)" % self.name)
        return (Loss, self._args)

    def _describe(self):
        return "%s, dim %d" % (self.name, self.dim)


def _view(p, n):
    """A zero-copy NumPy view of n values at a C pointer (valid during the callback), or a list."""
    if np is not None:
        return np.ctypeslib.as_array(p, shape=(n,))
    return [p[k] for k in range(n)]


class Regularizer(_Handle):
    """h(x): Regularizer("l2", dim, lam), ("l1", dim, lam), ("elastic-net", dim, l1, l2), ...
    Pickles (rebuilt from its name, dimension and parameters)."""

    _destroy = lib.dpdo_regularizer_destroy
    _errmsg = lib.dpdo_regularizer_errmsg

    def __init__(self, name, dim, *params):
        super().__init__()
        t = lib.dpdo_regularizer_type_find(name.encode())
        if not t:
            raise InvalidArgument(_lib.E_INVAL, "unknown regularizer %r" % name)
        k, pp, n = as_doubles(list(params) or [0.0])
        self._h = _new(lib.dpdo_regularizer_create, "regularizer %r: invalid dimension or parameters %r"
                       % (name, params), t, None, dim, pp, len(params))
        self._own()
        self._args = (name, dim) + tuple(float(v) for v in params)

    @_guarded(mutating=False)
    def value(self, x) -> float:
        """h(x)."""
        k, px, n = as_doubles(x)
        v = C.c_double()
        self._check(lib.dpdo_regularizer_value(self._ptr(), px, n, C.byref(v)))
        return v.value

    def __reduce__(self):
        return (Regularizer, self._args)

    def _describe(self):
        return "%s, dim %d, params %s" % (self._args[0], self._args[1], list(self._args[2:]))


def _restore_node(data, loss, weight, remote_samples):
    if remote_samples is not None:
        return Node.remote(loss, remote_samples, weight)
    return Node(data, loss, weight)


class Node(_Handle):
    """One participant: its shard (or a whole Dataset) and a loss. Node.remote(loss, samples)
    stands for a node whose data lives in another process. Pickles with its data and loss."""

    _destroy = lib.dpdo_node_destroy
    _errmsg = lib.dpdo_node_errmsg

    def __init__(self, data, loss, weight=1.0):
        super().__init__()
        if isinstance(data, Dataset):
            data = data.shard(0, data.rows)
        h = C.c_void_p()
        rc = lib.dpdo_node_create(C.byref(h), data._ptr(), loss._ptr(), weight)
        if rc < 0:
            raise error(rc, loss.message() or "node: invalid arguments")
        self._h = h
        self._own()
        self._borrow(data, loss)
        self.loss, self.data, self.weight, self._remote = loss, data, weight, None

    @classmethod
    def remote(cls, loss, samples, weight=1.0) -> "Node":
        """A node hosted by another process (MPI): only its loss and sample count live here."""
        obj = cls.__new__(cls)
        _Handle.__init__(obj)
        h = C.c_void_p()
        rc = lib.dpdo_node_create_remote(C.byref(h), loss._ptr(), samples, weight)
        if rc < 0:
            raise error(rc, loss.message())
        obj._h = h
        obj._own()
        obj._borrow(loss)
        obj.loss, obj.data, obj.weight, obj._remote = loss, None, weight, samples
        return obj

    @property
    def samples(self) -> int:
        """Number of samples the node holds."""
        return lib.dpdo_node_samples(self._ptr())

    @_guarded(mutating=False)
    def evaluate(self, x, grad=False):
        """Mean loss over the node's data at x; with grad=True the pair (loss, gradient)."""
        k, px, n = as_doubles(x)
        v = C.c_double()
        g, pg = empty_doubles(n) if grad else (None, None)
        if self.loss.cb is not None:
            self.loss.cb.clear()
        rc = lib.dpdo_node_eval(self._ptr(), px, n, None, 0, 0.0, C.byref(v), pg, None)
        if rc == _lib.E_CALLBACK and self.loss.cb is not None:
            self.loss.cb.reraise(error(rc, self.message()))
        self._check(rc)
        return (v.value, result(g, n)) if grad else v.value

    def __reduce__(self):
        return (_restore_node, (self.data, self.loss, self.weight, self._remote))

    def _describe(self):
        return "%d samples, %s loss%s" % (self.samples, self.loss.name, " (remote)" if self._remote else "")


# ---- networks ------------------------------------------------------------------------------------
def _restore_network(kind, args):
    return getattr(Network, kind)(*args)


class Network(_Handle):
    """A communication graph with gossip weights: Network.ring(n), .complete(n),
    .circulant(n, k), .torus(r, c), .star(n), .erdos_renyi(n, p, seed), .edges(n, pairs).
    Pickles (rebuilt by the same constructor)."""

    _destroy = lib.dpdo_network_destroy
    _errmsg = lib.dpdo_network_errmsg

    def __init__(self):
        super().__init__()
        self._h = _new(lib.dpdo_network_create, "network: out of memory")
        self._own()
        self._recipe = None

    @classmethod
    def _make(cls, kind, fn, *args):
        net = cls()
        net._check(fn(net._ptr(), *args))
        net._recipe = (kind, args)
        return net

    @classmethod
    def ring(cls, n) -> "Network":
        """A cycle of n nodes."""
        return cls._make("ring", lib.dpdo_network_set_ring, n)

    @classmethod
    def complete(cls, n) -> "Network":
        """Every pair of the n nodes connected."""
        return cls._make("complete", lib.dpdo_network_set_complete, n)

    @classmethod
    def circulant(cls, n, k) -> "Network":
        """Each node connected to its k nearest neighbours on each side."""
        return cls._make("circulant", lib.dpdo_network_set_circulant, n, k)

    @classmethod
    def torus(cls, rows, cols) -> "Network":
        """A rows x cols torus grid."""
        return cls._make("torus", lib.dpdo_network_set_torus, rows, cols)

    @classmethod
    def star(cls, n) -> "Network":
        """Node 0 connected to the n - 1 others."""
        return cls._make("star", lib.dpdo_network_set_star, n)

    @classmethod
    def erdos_renyi(cls, n, p, seed=1, max_tries=100) -> "Network":
        """A connected G(n, p) graph (redrawn up to max_tries times until connected)."""
        return cls._make("erdos_renyi", lib.dpdo_network_set_erdos_renyi, n, p, seed, max_tries)

    @classmethod
    def edges(cls, n, pairs) -> "Network":
        """n nodes and the given undirected edges (pairs of node indices)."""
        pairs = [(int(a), int(b)) for a, b in pairs]
        flat = [v for pr in pairs for v in pr]
        k, pe, m = as_int64(flat)
        net = cls._make("edges", lib.dpdo_network_set_edges, n, pe, m // 2)
        net._recipe = ("edges", (n, pairs))
        return net

    @classmethod
    def make(cls, spec, n) -> "Network":
        """A network from a short spec for n nodes: "ring", "complete", "star", "torus" (n = r * c,
        r as square as possible), "circulant-K", "erdos-renyi-P" (seed 1), or a Network (returned)."""
        if isinstance(spec, Network):
            return spec
        s = str(spec).lower()
        if s in ("ring", "complete", "star"):
            return getattr(cls, s)(n)
        if s == "torus":
            r = int(math.isqrt(n))
            while n % r:
                r -= 1
            return cls.torus(r, n // r)
        if s.startswith("circulant-"):
            return cls.circulant(n, int(s.split("-", 1)[1]))
        if s.startswith("erdos-renyi-"):
            return cls.erdos_renyi(n, float(s.split("-", 2)[2]))
        raise InvalidArgument(_lib.E_INVAL, "unknown network spec %r (ring, complete, star, torus, circulant-K, "
                              "erdos-renyi-P)" % (spec,))

    @property
    def nodes(self) -> int:
        """Number of nodes."""
        return lib.dpdo_network_nodes(self._ptr())

    @property
    def edge_count(self) -> int:
        """Number of undirected edges."""
        return lib.dpdo_network_edge_count(self._ptr())

    @_guarded(mutating=False)
    def spectral_gap(self) -> float:
        """1 - (second largest eigenvalue modulus) of the gossip matrix."""
        g = C.c_double()
        self._check(lib.dpdo_network_spectral_gap(self._ptr(), C.byref(g)))
        return g.value

    def __reduce__(self):
        if self._recipe is None:
            raise TypeError("dpdo.Network cannot be pickled before it is built")
        return (_restore_network, self._recipe)

    def _describe(self):
        kind = self._recipe[0] if self._recipe else "empty"
        return "%s, %d nodes, %d edges" % (kind, self.nodes, self.edge_count)


# ---- privacy -------------------------------------------------------------------------------------
def _restore_recipe(cls, kind, args):
    return getattr(cls, kind)(*args) if kind else cls()


class Sampling(_Handle):
    """Who takes part in a release: Sampling() (everyone), Sampling.poisson(q), Sampling.wor(n, m)."""

    _destroy = lib.dpdo_sampling_destroy
    _errmsg = lib.dpdo_sampling_errmsg

    def __init__(self):
        super().__init__()
        self._h = _new(lib.dpdo_sampling_create, "sampling: out of memory")
        self._own()
        self._recipe = (None, ())

    @classmethod
    def poisson(cls, q) -> "Sampling":
        """Each record takes part independently with probability q."""
        s = cls()
        s._check(lib.dpdo_sampling_set_poisson(s._ptr(), q))
        s._recipe = ("poisson", (q,))
        return s

    @classmethod
    def wor(cls, n, m) -> "Sampling":
        """m of n records drawn without replacement."""
        s = cls()
        s._check(lib.dpdo_sampling_set_wor(s._ptr(), n, m))
        s._recipe = ("wor", (n, m))
        return s

    def __reduce__(self):
        return (_restore_recipe, (Sampling,) + self._recipe)

    def _describe(self):
        k, a = self._recipe
        return "%s%s" % (k or "none", "(%s)" % ", ".join(map(repr, a)) if a else "")


class Event(_Handle):
    """One release: Event.gaussian(sensitivity, sigma, sampling=None), Event.laplace(...)."""

    _destroy = lib.dpdo_event_destroy
    _errmsg = lib.dpdo_event_errmsg

    def __init__(self):
        super().__init__()
        self._h = _new(lib.dpdo_event_create, "event: out of memory")
        self._own()
        self._recipe = (None, ())

    @classmethod
    def gaussian(cls, sensitivity, sigma, sampling=None) -> "Event":
        """A Gaussian mechanism with noise std sigma for this L2 sensitivity (the sampling is copied)."""
        e = cls()
        e._check(lib.dpdo_event_set_gaussian(e._ptr(), sampling._ptr() if sampling else None, sensitivity, sigma))
        e._recipe = ("gaussian", (sensitivity, sigma, sampling))
        return e

    @classmethod
    def laplace(cls, sensitivity, scale, sampling=None) -> "Event":
        """A Laplace mechanism with this scale for this L1 sensitivity."""
        e = cls()
        e._check(lib.dpdo_event_set_laplace(e._ptr(), sampling._ptr() if sampling else None, sensitivity, scale))
        e._recipe = ("laplace", (sensitivity, scale, sampling))
        return e

    def __reduce__(self):
        return (_restore_recipe, (Event,) + self._recipe)

    def _describe(self):
        k, a = self._recipe
        if not k:
            return "empty"
        return "%s(sensitivity=%g, noise=%g%s)" % (k, a[0], a[1], ", %r" % a[2] if a[2] is not None else "")


def _set_mac_key(obj, fn, key):
    """fn(handle, key, len) for Ledger.set_key and Model.set_key; the key is kept on obj (text())."""
    k = None if key is None else bytes(key)
    obj._check(fn(obj._ptr(), k, 0 if k is None else len(k)))
    obj._key = k


def _restore_ledger(nodes, saved):
    led = Ledger(nodes)
    led.load(saved)
    return led


class Ledger(_Handle):
    """Per-node record of the releases charged (what an accountant reads). Pickles through its
    checksummed text (save()/load())."""

    _destroy = lib.dpdo_ledger_destroy
    _errmsg = lib.dpdo_ledger_errmsg

    def __init__(self, nodes):
        super().__init__()
        self._h = _new(lib.dpdo_ledger_create, "ledger: invalid node count %r" % nodes, nodes)
        self._own()

    @property
    def nodes(self) -> int:
        """Number of nodes."""
        return lib.dpdo_ledger_nodes(self._ptr())

    @_guarded(mutating=False)
    def charges(self, node) -> int:
        """Total charges recorded for a node."""
        return lib.dpdo_ledger_charges(self._ptr(), node)

    @_guarded()
    def charge(self, event, count=1, nodes=None) -> None:
        """Record `count` repetitions of `event` for the given nodes (None: all)."""
        if nodes is None:
            self._check(lib.dpdo_ledger_charge(self._ptr(), event._ptr(), count, None, -1))
        else:
            k, pn, m = as_int64(nodes)
            self._check(lib.dpdo_ledger_charge(self._ptr(), event._ptr(), count, pn, m))

    @_guarded()
    def reset(self) -> None:
        """Forget every charge."""
        self._check(lib.dpdo_ledger_reset(self._ptr()))

    @_guarded(mutating=False)
    def save(self) -> str:
        """The ledger's checksummed text (str)."""
        n = C.c_int64()
        lib.dpdo_ledger_save(self._ptr(), None, 0, C.byref(n))
        buf = C.create_string_buffer(n.value + 1)
        self._check(lib.dpdo_ledger_save(self._ptr(), buf, n.value + 1, C.byref(n)))
        return buf.raw[:n.value].decode()

    @_guarded()
    def load(self, s) -> None:
        """Replace the charges by those of a saved text (checksum verified)."""
        b = s.encode()
        self._check(lib.dpdo_ledger_load(self._ptr(), b, len(b)))

    @_guarded()
    def set_key(self, key) -> None:
        """Authenticate the ledger's text with a keyed BLAKE2b-256 MAC (key: 16..64 bytes; None
        removes it). While a key is set, save() writes an authenticated ledger (a run identifier,
        a sequence number, the MAC) and load() accepts only such a text under the same key, of the
        same run, not older than this ledger (docs/privacy.md, ledger files)."""
        _set_mac_key(self, lib.dpdo_ledger_set_key, key)

    @_guarded(mutating=False)
    def sequence(self) -> "Tuple[bytes, int]":
        """(run identifier (16 bytes), sequence number) that save() writes now; keyed ledgers only.
        Persist it where a rollback of the ledger file cannot reach, and pin it after a restart
        with set_min_sequence (docs/checkpoint.md, "Rollback")."""
        run = C.create_string_buffer(16)
        seq = C.c_uint64()
        self._check(lib.dpdo_ledger_sequence(self._ptr(), run, C.byref(seq)))
        return run.raw[:16], seq.value

    @_guarded()
    def set_min_sequence(self, run, min_seq) -> None:
        """Anti-rollback: later load() calls accept only an authenticated text of `run` (16 bytes)
        with a sequence >= min_seq, even into a fresh ledger. run None removes the pin."""
        if run is None:
            self._check(lib.dpdo_ledger_set_min_sequence(self._ptr(), None, 0))
            return
        r = bytes(run)
        if len(r) != 16:
            raise ValueError("run must be 16 bytes, not %d" % len(r))
        self._check(lib.dpdo_ledger_set_min_sequence(self._ptr(), r, int(min_seq)))

    def __reduce__(self):
        if getattr(self, "_key", None):
            raise TypeError("an authenticated Ledger does not pickle (its key would travel with it): "
                            "pickle save()'s text and load() it into a Ledger given the key")
        return (_restore_ledger, (self.nodes, self.save()))

    def _describe(self):
        return "%d nodes, %d charges at node 0" % (self.nodes, self.charges(0))


def accountant_types() -> "List[str]":
    """Names of the built-in accountant types ("rdp", "exact", ...)."""
    out, t = [], lib.dpdo_accountant_type_next(None)
    while t:
        out.append(text(lib.dpdo_accountant_type_name(t)))
        t = lib.dpdo_accountant_type_next(t)
    return out


class Accountant(_Handle):
    """An accountant ("auto" by default: the tightest valid figure of rdp, exact and pld; or
    "rdp", "pld", "exact", "zcdp", "pure"; see accountant_types()) reading a ledger (kept
    alive). Pickles with its ledger."""

    _destroy = lib.dpdo_accountant_destroy
    _errmsg = lib.dpdo_accountant_errmsg

    def __init__(self, ledger, kind="auto", orders=None, conversion="improved"):
        super().__init__()
        t = lib.dpdo_accountant_type_find(kind.encode())
        if not t:
            raise InvalidArgument(_lib.E_INVAL, "unknown accountant %r (known: %s)" % (kind, ", ".join(accountant_types())))
        if conversion not in ("improved", "classic"):
            raise InvalidArgument(_lib.E_INVAL, "conversion must be 'improved' or 'classic', not %r" % (conversion,))
        opts = None
        if orders is not None or conversion != "improved":
            o = _fill(_AccountantOptions, lib.dpdo_accountant_options_init, {}, "accountant options")
            if orders is not None:
                self._orders, po, no = as_doubles(orders)
                o.orders, o.n_orders = po, no
            o.conversion = _capi.DPDO_CONVERSION_CLASSIC if conversion == "classic" else _capi.DPDO_CONVERSION_IMPROVED
            opts = C.byref(o)
        self._h = _new(lib.dpdo_accountant_create, "accountant: invalid options", t, None, ledger._ptr(), opts)
        self._own()
        self._borrow(ledger)
        self.ledger = ledger
        self._args = (ledger, kind, None if orders is None else [float(v) for v in orders], conversion)

    @property
    def name(self) -> str:
        """The accountant type's name."""
        return text(lib.dpdo_accountant_name(self._ptr()))

    @_guarded(mutating=False)
    def epsilon(self, delta, node=NODE_ALL, with_order=False):
        """Smallest epsilon certified at delta for a node (NODE_ALL: the worst node); with
        with_order=True the pair (epsilon, optimal RDP order or NaN)."""
        e, o = C.c_double(), C.c_double()
        self._check(lib.dpdo_accountant_epsilon(self._ptr(), node, delta, C.byref(e), C.byref(o)))
        return (e.value, o.value) if with_order else e.value

    @_guarded(mutating=False)
    def delta(self, epsilon, node=NODE_ALL) -> float:
        """Smallest delta certified at epsilon."""
        d = C.c_double()
        self._check(lib.dpdo_accountant_delta(self._ptr(), node, epsilon, C.byref(d)))
        return d.value

    @_guarded(mutating=False)
    def calibrate_sigma(self, epsilon, delta, steps, sensitivity=1.0, sampling=None) -> float:
        """Smallest sigma so that `steps` more Gaussian releases keep epsilon at delta."""
        s = C.c_double()
        self._check(lib.dpdo_accountant_calibrate_sigma(self._ptr(), sampling._ptr() if sampling else None,
                                                        sensitivity, steps, epsilon, delta, C.byref(s)))
        return s.value

    @_guarded(mutating=False)
    def calibrate_steps(self, epsilon, delta, sigma, sensitivity=1.0, sampling=None) -> float:
        """Largest number of Gaussian releases with this sigma keeping epsilon at delta."""
        s = C.c_double()
        self._check(lib.dpdo_accountant_calibrate_steps(self._ptr(), sampling._ptr() if sampling else None,
                                                        sensitivity, sigma, epsilon, delta, C.byref(s)))
        return s.value

    def __reduce__(self):
        return (Accountant, self._args)

    def _describe(self):
        return "%s over %r" % (self.name, self.ledger)


def _restore_paper(name, params):
    return PaperBound(name, **params)


class PaperBound(_Handle):
    """A paper's own privacy bound as the paper states it ("dp-dda-thm1", "do-adp-thm1",
    "dp-wor-sgd-thm2", "fed-plt-prop4"): PaperBound(name, **parameters).evaluate() returns the
    outputs as a dict; .valid is False when a precondition of the theorem fails and .violations
    names them (the numbers are still the paper's, to reproduce it)."""

    _destroy = lib.dpdo_paper_destroy
    _errmsg = lib.dpdo_paper_errmsg

    def __init__(self, name, **params):
        super().__init__()
        self._t = lib.dpdo_paper_type_find(name.encode())
        if not self._t:
            raise InvalidArgument(_lib.E_INVAL, "unknown paper bound %r; known: %s" % (name, ", ".join(self.types())))
        self._h = _new(lib.dpdo_paper_create, "paper bound: out of memory", self._t)
        self._own()
        for k, v in params.items():
            self.set(k, v)
        self._name_ = name
        self._params = dict(params)

    @staticmethod
    def types() -> "List[str]":
        """Names of the paper bounds."""
        out, t = [], lib.dpdo_paper_type_next(None)
        while t:
            out.append(text(lib.dpdo_paper_type_name(t)))
            t = lib.dpdo_paper_type_next(t)
        return out

    def _names(self, fn):
        out, i = [], 0
        while True:
            n = fn(self._t, i)
            if not n:
                return out
            out.append(text(n))
            i += 1

    @property
    def parameters(self) -> "List[str]":
        """Parameter names of the theorem."""
        return self._names(lib.dpdo_paper_type_param)

    @property
    def outputs(self) -> "List[str]":
        """Output names of the theorem."""
        return self._names(lib.dpdo_paper_type_output)

    @property
    def title(self) -> str:
        """The theorem's title."""
        return text(lib.dpdo_paper_type_title(self._t))

    @_guarded()
    def set(self, name, value) -> None:
        """Set a parameter of the theorem."""
        self._check(lib.dpdo_paper_set(self._ptr(), name.encode(), float(value)))
        if hasattr(self, "_params"):
            self._params[name] = float(value)

    @_guarded()
    def evaluate(self) -> "Dict[str, float]":
        """Evaluate the bound: {output name: value}."""
        self._check(lib.dpdo_paper_evaluate(self._ptr()))
        out = {}
        for n in self.outputs:
            v = C.c_double()
            if lib.dpdo_paper_get(self._ptr(), n.encode(), C.byref(v)) == 0:
                out[n] = v.value
        return out

    @property
    def valid(self) -> bool:
        """False when a precondition of the theorem fails (see violations)."""
        return lib.dpdo_paper_valid(self._ptr()) == 1

    @property
    def violations(self) -> str:
        """The failed preconditions, as text."""
        return text(lib.dpdo_paper_violations(self._ptr()))

    def __reduce__(self):
        return (_restore_paper, (self._name_, self._params))

    def _describe(self):
        return "%s %s" % (self._name_, self._params)


# ---- local solvers, compressors, policies --------------------------------------------------------
_SolverType = _capi.dpdo_solver_type
_RUN = _field_type(_SolverType, "run")
_CONTR = _field_type(_SolverType, "contraction")


def _restore_solver(name, dim, params):
    return Solver(name, dim, **params)


class Solver(_Handle):
    """A local solver for the federated algorithms: Solver("gd" | "agd" | "sgd" | "noisy-gd" |
    "exact-quadratic", dim, **params), or Solver.python(fn, dim) with
    fn(node_eval, v, rho, epochs, w) updating w in place to approximately minimise
    f_i(w) + |w - v|^2 / (2 rho); node_eval(x) -> (loss, grad) evaluates the node."""

    _destroy = lib.dpdo_solver_destroy
    _errmsg = lib.dpdo_solver_errmsg

    def __init__(self, name="gd", dim=1, **params):
        super().__init__()
        self.cb = None
        t = lib.dpdo_solver_type_find(name.encode())
        if not t:
            raise InvalidArgument(_lib.E_INVAL, "unknown solver %r" % name)
        self._h = _new(lib.dpdo_solver_create, "solver %r: invalid dimension" % name, t, None, dim)
        self._own()
        self._args = (name, dim, dict(params))
        for k, v in params.items():
            self.set(k, v)

    @classmethod
    def python(cls, fn, dim, name="python-solver") -> "Solver":
        """A solver running fn(node_eval, v, rho, epochs, w) (see the class docstring)."""
        obj = cls.__new__(cls)
        _Handle.__init__(obj)
        cb = _Callbacks()
        obj.cb = cb

        def run(user, node, pv, dim_, rho, epochs, rng, node_id, rnd, pw):
            v = _view(pv, dim_)
            w = _view(pw, dim_)

            def node_eval(x):
                kx, px, n = as_doubles(x, dim_)
                val = C.c_double()
                g, pg = empty_doubles(dim_)
                rc = lib.dpdo_node_eval(node, px, n, None, 0, 0.0, C.byref(val), pg, None)
                if rc < 0:
                    raise error(rc, text(lib.dpdo_node_errmsg(node)))
                return val.value, result(g, dim_)
            out = fn(node_eval, v, rho, epochs, w)
            if out is not None and out is not w:
                for k in range(dim_):
                    pw[k] = out[k]
            elif np is None:
                for k in range(dim_):
                    pw[k] = w[k]
            return 0
        t = _SolverType()
        t.struct_size = C.sizeof(t)
        obj._name = name.encode()
        t.name = obj._name
        t.run = _RUN(cb.guard(run))
        obj._type, obj._keep = t, t.run
        obj._h = _new(lib.dpdo_solver_create, "solver %r: invalid dimension" % name, C.byref(t), None, dim)
        obj._own()
        obj._args = None
        return obj

    @_guarded()
    def set(self, param, value) -> None:
        """Set a named solver parameter ("step", ...)."""
        self._check(lib.dpdo_solver_set(self._ptr(), param.encode(), float(value)))
        if self._args is not None:
            self._args[2][param] = float(value)

    def __reduce__(self):
        if self._args is None:
            raise TypeError("dpdo.Solver.python(...) cannot be pickled: it calls a Python function")
        return (_restore_solver, self._args)

    def _describe(self):
        return "%s, params %s" % (self._args[0], self._args[2]) if self._args else "python"

    @_guarded(mutating=False)
    def get(self, param) -> float:
        """Read a named solver parameter."""
        v = C.c_double()
        self._check(lib.dpdo_solver_get(self._ptr(), param.encode(), C.byref(v)))
        return v.value


class Compressor(_Handle):
    """A message compressor ("identity", "top-k", "rand-k", ...), with k values kept."""

    _destroy = lib.dpdo_compressor_destroy
    _errmsg = lib.dpdo_compressor_errmsg

    def __init__(self, name, dim, k=None):
        super().__init__()
        t = lib.dpdo_compressor_type_find(name.encode())
        if not t:
            raise InvalidArgument(_lib.E_INVAL, "unknown compressor %r" % name)
        self._h = _new(lib.dpdo_compressor_create, "compressor %r: invalid dimension" % name, t, None, dim)
        self._own()
        if k is not None:
            self._check(lib.dpdo_compressor_set_k(self._ptr(), k))
        self._args = (name, dim, k)

    def __reduce__(self):
        return (Compressor, self._args)

    def _describe(self):
        return "%s, dim %d, k %s" % self._args


class Policy(_Handle):
    """A Local/Global decision policy for DP-WOR-SGD ("always-global", "dqn", ...)."""

    _destroy = lib.dpdo_policy_destroy
    _errmsg = lib.dpdo_policy_errmsg

    def __init__(self, name, nodes, state_len, **params):
        super().__init__()
        t = lib.dpdo_policy_type_find(name.encode())
        if not t:
            raise InvalidArgument(_lib.E_INVAL, "unknown policy %r" % name)
        self._h = _new(lib.dpdo_policy_create, "policy %r: invalid sizes" % name, t, None, nodes, state_len)
        self._own()
        for k, v in params.items():
            self._check(lib.dpdo_policy_set(self._ptr(), k.encode(), float(v)))
        self._args = (name, nodes, state_len)
        self._params = {k: float(v) for k, v in params.items()}

    def _why_not_picklable(self):
        return (": a policy's learned state (DQN weights, replay buffer) is saved only as part of its "
                "algorithm's checkpoint (pickle the Algorithm, or Algorithm.save)")

    def _describe(self):
        return "%s, %d nodes, state length %d" % self._args


# ---- algorithms ----------------------------------------------------------------------------------
def algorithm_types() -> "List[str]":
    """Names of the built-in algorithm types."""
    out, t = [], lib.dpdo_algorithm_type_next(None)
    while t:
        out.append(text(lib.dpdo_algorithm_type_name(t)))
        t = lib.dpdo_algorithm_type_next(t)
    return out


class ParamInfo(NamedTuple):
    """One typed parameter of an algorithm type (dpdo_algorithm_type_param_next and dpdo_param_*)."""
    name: str
    key: int
    type: type  # int or float
    live: bool  # settable while running
    lo: float
    hi: float
    doc: str
    default: Any = None  # for n_nodes nodes and default options (NaN: derived at prepare)


def _param_info(t, k, n_nodes):
    lo, hi = C.c_double(), C.c_double()
    lib.dpdo_param_bounds(k, C.byref(lo), C.byref(hi))
    typ = int if lib.dpdo_param_type(k) == 0 else float
    default = None
    if n_nodes is not None:
        v = C.c_double()
        rc = lib.dpdo_algorithm_type_param_default(t, k, int(n_nodes), C.byref(v))
        if rc < 0:
            raise error(rc, "dpdo_algorithm_type_param_default(%s, %d nodes) failed" % (text(lib.dpdo_param_name(k)),
                                                                                        n_nodes))
        default = int(v.value) if typ is int else v.value
    return ParamInfo(text(lib.dpdo_param_name(k)), k, typ, lib.dpdo_param_live(k) == 1, lo.value, hi.value,
                     text(lib.dpdo_param_doc(k)), default)


def parameters(kind, n_nodes=None) -> "List[ParamInfo]":
    """The typed parameters an algorithm type takes, in the C listing's order (common ones first),
    with name, key, type, live flag, bounds and a one-line doc; no instance is needed. With
    n_nodes, .default is the value an algorithm of that many nodes and default options starts
    with (some defaults depend on the number of nodes; NaN = derived at prepare)."""
    t = lib.dpdo_algorithm_type_find(kind.encode())
    if not t:
        raise InvalidArgument(_lib.E_INVAL, "unknown algorithm %r; built in: %s" % (kind, ", ".join(algorithm_types())))
    out, k = [], lib.dpdo_algorithm_type_param_next(t, 0)
    while k > 0:
        out.append(_param_info(t, k, n_nodes))
        k = lib.dpdo_algorithm_type_param_next(t, k)
    if k < 0:
        raise error(k, "dpdo_algorithm_type_param_next(%s) failed" % kind)
    return out


def param_key(name) -> int:
    """The integer key of a parameter name ("dda-active" or "dda_active"), by the library's
    dpdo_param_find: also the parameters an algorithm defines without a DPDO_PARAM_* constant."""
    key = _lib.lib.dpdo_param_find(str(name).replace("_", "-").encode())
    if key <= 0:
        known = sorted({p.name for kind in algorithm_types() for p in parameters(kind)})
        raise InvalidArgument(_lib.E_INVAL, "unknown parameter %r; known: %s" % (name, ", ".join(known)))
    return key


_ProgressStruct = _capi.dpdo_progress


_PROGRESS_FN = _capi.dpdo_progress_fn


class Progress:
    """What run(progress=fn) hands to fn: round (completed), max_rounds, steps (this call),
    epsilon and delta (NaN unless asked for with epsilon=True), objective (NaN unless
    objective=True), done (the run finished)."""

    __slots__ = ("round", "max_rounds", "steps", "epsilon", "delta", "objective", "done")

    def __init__(self, p):
        self.round, self.max_rounds, self.steps = p.round, p.max_rounds, p.steps
        self.epsilon, self.delta, self.objective = p.epsilon, p.delta, p.objective
        self.done = p.status == _lib.DONE

    def __repr__(self):
        return ("<dpdo.Progress round %d/%d, epsilon %g, objective %g%s>"
                % (self.round, self.max_rounds, self.epsilon, self.objective, ", done" if self.done else ""))


def _tqdm_bar(total, initial):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, initial=initial, unit="round")


class _SigintFlag:
    """While installed (main thread only, and only over Python's default SIGINT handler), SIGINT
    sets .raised instead of raising KeyboardInterrupt."""

    def __init__(self):
        self.raised = False
        self._old = None

    def _handler(self, signum, frame):
        self.raised = True

    def install(self):
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._old = signal.signal(signal.SIGINT, self._handler)

    def restore(self):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None


class _hybridmethod:
    """A method that receives the class when called on the class and the instance otherwise."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, obj, cls):
        return functools.partial(self.fn, cls if obj is None else obj)


def _checkpoint_options(key):
    """A dpdo_checkpoint_options with the host key (32 bytes), or None for no key."""
    if key is None:
        return None
    key = bytes(key)
    if len(key) != _capi.DPDO_CHECKPOINT_KEY_BYTES:
        raise InvalidArgument(_lib.E_INVAL, "key must be %d bytes, got %d" % (_capi.DPDO_CHECKPOINT_KEY_BYTES,
                                                                              len(key)))
    o = _fill(_CheckpointOptions, lib.dpdo_checkpoint_options_init, {}, "checkpoint options")
    o.key = key  # ctypes keeps the bytes alive with o
    return o


def _restore_algorithm(spec, ckpt):
    acc = None
    if spec["accountant"] is not None:
        nodes, led_text, (kind, orders, conversion) = spec["accountant"]
        acc = Accountant(_restore_ledger(nodes, led_text), kind, orders, conversion)
    pol = None
    if spec["policy"] is not None:
        args, params = spec["policy"]
        pol = Policy(*args, **params)
    alg = Algorithm(spec["kind"], spec["nodes"], spec["network"], spec["regularizer"], acc, solver=spec["solver"],
                    compressor=spec["compressor"], policy=pol, **spec["options"])
    for k, v in spec["params"]:
        alg.set(k, v)
    if spec["node_probabilities"] is not None:
        alg.set_node_probabilities(spec["node_probabilities"])
    if ckpt is not None:
        import tempfile
        d = tempfile.mkdtemp(prefix="dpdo-unpickle-")
        try:
            p = os.path.join(d, "alg.ckpt")
            with open(p, "wb") as f:
                f.write(ckpt)
            alg._load_into(p)
        finally:
            for x in os.listdir(d):
                os.unlink(os.path.join(d, x))
            os.rmdir(d)
    return alg


class Algorithm(_Handle):
    """An algorithm run over nodes.

        Algorithm("dp-dda", nodes, network, regularizer, accountant, seed=..., max_rounds=...,
                  noise_mode=..., epsilon=..., randomness=RANDOMNESS_REPRODUCIBLE, ...)

    Keyword options are the fields of dpdo_algorithm_options (an unknown name is an error);
    params= sets typed parameters by name ({"dda-active": 4}); solver=, compressor=, policy=
    attach the federated local solver, DO-ADP compressor and DP-WOR-SGD policy.

    step() runs one round and returns True, or False when the run is done (see stop_reason);
    iterating over the algorithm steps until done, yielding the round number; run() runs the
    remaining rounds in C, with an optional progress report (tqdm) and Ctrl-C support: a
    KeyboardInterrupt stops the run between two rounds within ~0.1 s and leaves it resumable
    (run() again continues from that round). Getters: output(), iterate(), privacy(),
    objective(), comm(), ...

    One thread at a time: a second thread calling into the same Algorithm while a call runs
    gets StateError; close() from another thread stops a run at the next round and waits.

    Checkpoints (docs/checkpoint.md): alg.save(path, key=None) writes the run; alg.load(path)
    resumes it on an algorithm set up the same way that has not started, and
    Algorithm.load(path, kind, nodes, ...) does both (same arguments as the constructor). With
    REPRODUCIBLE randomness the resumed run is bit-identical to the uninterrupted one. pickle
    goes through the same checkpoint: the configuration, the accountant's ledger as it was when
    this run started, and the run's state; a private SECURE run (whose keys exist only in this
    process) and a run with host keys (set_node_key) refuse to pickle: save them with a host
    key (key=32 bytes: the file is encrypted and carries the node keys) instead."""

    _destroy = lib.dpdo_algorithm_destroy
    _errmsg = lib.dpdo_algorithm_errmsg

    def __init__(self, kind, nodes, network=None, regularizer=None, accountant=None, params=None, solver=None,
                 compressor=None, policy=None, **options):
        super().__init__()
        t = lib.dpdo_algorithm_type_find(kind.encode())
        if not t:
            raise InvalidArgument(_lib.E_INVAL, "unknown algorithm %r; built in: %s" % (kind, ", ".join(algorithm_types())))
        self._h = _new(lib.dpdo_algorithm_create, "algorithm: out of memory", t)
        self._own()
        self.kind = kind
        nodes = list(nodes)
        arr = (C.c_void_p * max(len(nodes), 1))(*[n.handle for n in nodes])
        o = _fill(_AlgorithmOptions, lib.dpdo_algorithm_options_init, options, "algorithm options")
        self.options = {k: getattr(o, k) for k in _option_names(_AlgorithmOptions)}
        self._check(lib.dpdo_algorithm_setup(self._ptr(), arr, len(nodes), network._ptr() if network else None,
                                             regularizer._ptr() if regularizer else None,
                                             accountant._ptr() if accountant else None, C.byref(o)))
        self._borrow(network, regularizer, accountant, *nodes)
        self.nodes, self.network, self.regularizer, self.accountant = nodes, network, regularizer, accountant
        self._dim = lib.dpdo_algorithm_dim(self._h)
        self._n = len(nodes)
        self._set_params = []        # (name or key, value) in the order set: pickling replays them
        self._host_keys = False      # set_node_key/_secret was called: not picklable
        self._node_probs = None      # set_node_probabilities (part of the configuration)
        self._start_ledger = None    # the ledger's text when this run started (pickling)
        for k, v in (params or {}).items():
            self.set(k, v)
        self.solver = self.compressor = self.policy = None
        if solver is not None:
            self.set_solver(solver)
        if compressor is not None:
            self._check(lib.dpdo_algorithm_set_compressor(self._ptr(), compressor._ptr()))
            self._borrow(compressor)
            self.compressor = compressor
        if policy is not None:
            self._check(lib.dpdo_algorithm_set_policy(self._ptr(), policy._ptr()))
            self._borrow(policy)
            self.policy = policy

    @_guarded()
    def set_solver(self, solver) -> None:
        """Attach the local solver of a federated algorithm (kept alive)."""
        self._check(lib.dpdo_algorithm_set_solver(self._ptr(), solver._ptr()))
        self._borrow(solver)
        self.solver = solver

    # parameters
    @_guarded()
    def set(self, key, value) -> None:
        """Set a typed parameter by name ("dda-active") or key."""
        k = param_key(key) if isinstance(key, str) else int(key)
        if lib.dpdo_param_type(k) == 0:
            self._check(lib.dpdo_algorithm_set_int(self._ptr(), k, int(value)))
        else:
            self._check(lib.dpdo_algorithm_set_double(self._ptr(), k, float(value)))
        self._set_params.append((k, value))

    @_guarded(mutating=False)
    def get(self, key):
        """Read a typed parameter by name or key."""
        k = param_key(key) if isinstance(key, str) else int(key)
        if lib.dpdo_param_type(k) == 0:
            v = C.c_int64()
            self._check(lib.dpdo_algorithm_get_int(self._ptr(), k, C.byref(v)))
        else:
            v = C.c_double()
            self._check(lib.dpdo_algorithm_get_double(self._ptr(), k, C.byref(v)))
        return v.value

    @_guarded(mutating=False)
    def parameters(self) -> "Dict[str, Any]":
        """Every typed parameter of this algorithm's type with its current value (the default until
        set), by name, in the C listing's order (dpdo.parameters(kind) gives types, bounds, docs)."""
        out = {}
        for p in parameters(self.kind):
            if p.type is int:
                v = C.c_int64()
                self._check(lib.dpdo_algorithm_get_int(self._ptr(), p.key, C.byref(v)))
            else:
                v = C.c_double()
                self._check(lib.dpdo_algorithm_get_double(self._ptr(), p.key, C.byref(v)))
            out[p.name] = v.value
        return out

    @_guarded()
    def set_node_secret(self, node, secret) -> None:
        """Deprecated (64 bits): use set_node_key. Give a node its secret key (docs/distributed.md)."""
        self._check(lib.dpdo_algorithm_set_node_secret(self._ptr(), node, secret))
        self._host_keys = True

    @_guarded()
    def set_node_key(self, node, key) -> None:
        """Key a node's private streams by 32 bytes (bytes-like); kept across reset."""
        key = bytes(key)
        if len(key) != 32:
            raise ValueError("key must be 32 bytes, got %d" % len(key))
        self._check(lib.dpdo_algorithm_set_node_key(self._ptr(), node, key))
        self._host_keys = True

    @property
    def randomness_source(self) -> str:
        """'secure: ...' or 'reproducible: ...' (where the run's randomness comes from)."""
        return text(lib.dpdo_algorithm_randomness_source(self._ptr()))

    @_guarded()
    def prepare(self) -> None:
        """Calibrate the noise and check the preconditions now (step() does it otherwise)."""
        self._note_start()
        self._check(lib.dpdo_algorithm_prepare(self._ptr()))

    def _note_start(self):
        """Before a run starts (READY at round 0): keep the ledger's text, which a pickled run's
        accountant must hold again when the checkpoint is loaded (docs/checkpoint.md)."""
        if self._start_ledger is None and lib.dpdo_algorithm_round(self._h) == 0 and \
                lib.dpdo_algorithm_state(self._h) == _capi.DPDO_ALG_READY and self.accountant is not None:
            self._start_ledger = self.accountant.ledger.save()

    @_guarded()
    def set_next_active(self, flags) -> None:
        """Which nodes compute in the next round only (a sequence of 0/1 per node); None cancels."""
        if flags is None:
            self._check(lib.dpdo_algorithm_set_next_active(self._ptr(), None, self._n))
            return
        k, pf, n = as_int32(flags)
        self._check(lib.dpdo_algorithm_set_next_active(self._ptr(), pf, n))

    @_guarded()
    def set_node_probabilities(self, p) -> None:
        """Per-node activation probabilities (a sequence of n values in (0, 1]); None = the key's."""
        if p is None:
            self._check(lib.dpdo_algorithm_set_node_probabilities(self._ptr(), None, self._n))
            self._node_probs = None
            return
        k, pp, n = as_doubles(p)
        self._check(lib.dpdo_algorithm_set_node_probabilities(self._ptr(), pp, n))
        self._node_probs = [float(v) for v in (p.tolist() if hasattr(p, "tolist") else p)]

    # stepping
    def _callbacks(self):
        out = []
        for o in [n.loss for n in self.nodes] + [self.solver]:
            cb = getattr(o, "cb", None)
            if cb is not None and cb not in out:
                out.append(cb)
        return out

    def _fail(self, rc):
        err = error(rc, self.message())
        if rc == _lib.E_CALLBACK:
            for cb in self._callbacks():
                if cb.exc is not None:
                    cb.reraise(err)
        raise err

    def step(self) -> bool:
        """One round: True if it ran, False if the run is done (stop_reason says why)."""
        took = self._enter("step")
        try:
            h = self._ptr()
            self._note_start()
            self._in_c = True
            try:
                rc = lib.dpdo_algorithm_step(h)
            finally:
                self._in_c = False
            if rc == _lib.ROUND:
                return True
            if rc == _lib.DONE:
                return False
            self._fail(rc)
        finally:
            self._leave(took)

    def run(self, max_steps=0, progress=None, every=None, epsilon=False, objective=False,
            history=None) -> int:
        """Run up to max_steps rounds in C (0: until done); returns the rounds run.

        progress: None (nothing), True (a tqdm bar when tqdm is installed), a tqdm bar (updated),
        or a function fn(Progress) called between rounds: a true return value stops the run
        there (resumable, like Ctrl-C but without an exception). every: call it every so many
        rounds (default: adaptive, about 20 times a second). epsilon / objective: fill
        Progress.epsilon (an accountant query) / Progress.objective (a pass over the data).
        history: a list to which (round, epsilon, objective) tuples are appended at each report.

        Ctrl-C (SIGINT, when run() is called on the main thread) stops the run between two
        rounds and raises KeyboardInterrupt; the algorithm stays at that round, and run()/step()
        continue it to the same result as an uninterrupted run (REPRODUCIBLE randomness)."""
        took = self._enter("run")
        try:
            self._ptr()
            self._note_start()
            return self._run(max_steps, progress, every, epsilon, objective, history)
        finally:
            self._leave(took)

    def _run(self, max_steps, progress, every, want_eps, want_obj, history):
        h = self._ptr()
        bar, own_bar, fn = None, False, None
        if progress is True:
            r0 = lib.dpdo_algorithm_round(h)
            bar = _tqdm_bar(min(self.options["max_rounds"], r0 + max_steps) if max_steps > 0
                            else self.options["max_rounds"], r0)
            own_bar = bar is not None
        elif progress is not None and hasattr(progress, "update"):
            bar = progress
        elif callable(progress):
            fn = progress
        elif progress not in (None, False):
            raise InvalidArgument(_lib.E_INVAL, "progress must be None, True, a tqdm bar or a function")
        flags = (PROGRESS_EPSILON if want_eps else 0) | (PROGRESS_OBJECTIVE if want_obj else 0)
        adaptive = every is None
        st = {"exc": None, "every": 1 if adaptive else int(every), "t": time.monotonic(), "k": 0,
              "shown": lib.dpdo_algorithm_round(h), "stop": False, "sigint": None}

        def report(pp, user):
            try:
                p = pp.contents
                if history is not None:
                    history.append((p.round, p.epsilon, p.objective))
                if bar is not None:
                    bar.update(p.round - st["shown"])
                    st["shown"] = p.round
                stop = bool(fn(Progress(p))) if fn is not None else False
                if adaptive and p.steps > st["k"]:
                    now = time.monotonic()
                    per = (now - st["t"]) / (p.steps - st["k"])
                    st["t"], st["k"] = now, p.steps
                    # aim at a report every 0.05 s, growing at most 8-fold per report (one
                    # mis-timed sample, e.g. a single fast round, cannot push reports far apart)
                    # (capped at 2^17 rounds: a fast stretch mis-timed as faster still cannot
                    # leave Ctrl-C waiting for a second of 1-microsecond rounds)
                    want = 0.05 / per if per > 0 else float(8 * st["every"])
                    new = int(max(1.0, min(want, 8.0 * st["every"], float(1 << 17))))
                    if new != st["every"] and (new > 2 * st["every"] or 2 * new < st["every"]):
                        st["every"] = new
                        lib.dpdo_algorithm_set_progress(h, cfn, None, new, flags)
                if stop:
                    st["stop"] = True
                return 1 if (stop or self._cancel_requested or st["sigint"].raised) else 0
            except BaseException as e:  # noqa: B902 - KeyboardInterrupt lands here: stop the run
                if st["exc"] is None:
                    st["exc"] = e
                return 1

        cfn = _PROGRESS_FN(report)
        self._check(lib.dpdo_algorithm_set_progress(h, cfn, None, st["every"], flags))
        for cb in self._callbacks():
            cb.clear()
        n = C.c_int64()
        # Ctrl-C: Python runs signal handlers between bytecodes of the main thread, i.e. inside the
        # progress callback while C runs. With the default handler, KeyboardInterrupt could land
        # anywhere in the callback (even before its try block, where ctypes would swallow it), so
        # during the run a handler that only raises a flag is installed; the callback sees the flag
        # and stops the run between rounds, and KeyboardInterrupt is raised here afterwards.
        sigint = _SigintFlag()
        self._in_c = True
        try:
            sigint.install()
            st["sigint"] = sigint
            rc = lib.dpdo_algorithm_run(h, max_steps, C.byref(n))
        finally:
            self._in_c = False
            sigint.restore()
            lib.dpdo_algorithm_set_progress(h, None, None, 1, 0)
            if own_bar:
                bar.close()
        if sigint.raised:
            raise KeyboardInterrupt("dpdo: run() interrupted after round %d; run() again to continue"
                                    % lib.dpdo_algorithm_round(h))
        if st["exc"] is not None:
            raise st["exc"]
        if rc == _lib.E_CANCELED:
            return n.value
        if rc < 0:
            self._fail(rc)
        return n.value

    def __iter__(self) -> "Iterator[int]":
        while self.step():
            yield self.round

    @_guarded()
    def reset(self) -> None:
        """Back to round 0 with the same random streams (this run's ledger charges removed)."""
        self._check(lib.dpdo_algorithm_reset(self._ptr()))
        self._start_ledger = None

    # checkpoints and pickling
    @_guarded(mutating=False)
    def save(self, path, key=None) -> None:
        """Write a checkpoint of this run to `path` (dpdo_algorithm_save; the algorithm must have run
        at least one round). key: None (a plain file; nothing secret is written, so a private SECURE
        run refuses) or 32 bytes (the file is encrypted and authenticated and carries the nodes'
        keys; keep the key, load needs it)."""
        o = _checkpoint_options(key)
        rc = lib.dpdo_algorithm_save(self._ptr(), os.fsencode(path), C.byref(o) if o is not None else None)
        if rc == _lib.E_STATE and key is None and self.options["randomness"] == RANDOMNESS_SECURE:
            # the C message speaks of options.key; say it in this method's terms too
            raise StateError(rc, "%s; in Python: alg.save(path, key=<%d bytes>) and alg.load(path, key=...)"
                             % (self.message(), _capi.DPDO_CHECKPOINT_KEY_BYTES))
        self._check(rc)

    def _load_into(self, path, key=None):
        took = self._enter("load")
        try:
            o = _checkpoint_options(key)
            self._note_start()
            self._check(lib.dpdo_algorithm_load(self._ptr(), os.fsencode(path),
                                                C.byref(o) if o is not None else None))
        finally:
            self._leave(took)

    @_hybridmethod
    def load(cls_or_self, path, *args, key=None, **kwargs):
        """alg.load(path, key=None): resume the run saved in `path` on this algorithm, which must be
        set up as the saved one was and not have started (READY at round 0; a fresh accountant,
        or one holding what the saved run's held when it started). The file's configuration is
        compared and the first difference named (FormatError); on failure nothing changes.
        Algorithm.load(path, kind, nodes, network, ..., key=None, **options): build the algorithm
        with the constructor's arguments, then load. Returns the algorithm."""
        if isinstance(cls_or_self, type):
            alg = cls_or_self(*args, **kwargs)
            try:
                alg._load_into(path, key)
            except BaseException:
                alg.close()
                raise
            return alg
        if args or kwargs:
            raise TypeError("alg.load(path, key=None) takes no other arguments (Algorithm.load(path, kind, "
                            "nodes, ...) builds one)")
        cls_or_self._load_into(path, key)
        return cls_or_self

    def __reduce__(self):
        took = self._enter("pickle", False)
        try:
            return self._reduce()
        finally:
            self._leave(took)

    def _reduce(self):
        h = self._ptr()
        if self._host_keys:
            raise TypeError("dpdo.Algorithm with host keys (set_node_key) cannot be pickled: the keys are secret "
                            "and a pickle is not; alg.save(path, key=...) writes an encrypted checkpoint, or save "
                            "without a key and set the same keys again before alg.load(path)")
        st = lib.dpdo_algorithm_state(h)
        if st == _capi.DPDO_ALG_FAILED:
            raise TypeError("dpdo.Algorithm in state FAILED cannot be pickled (reset() it first)")
        ckpt = None
        if st in (_capi.DPDO_ALG_RUNNING, _capi.DPDO_ALG_DONE):
            if self.options["randomness"] == RANDOMNESS_SECURE and self.options["noise_mode"] != NOISE_NONE:
                raise TypeError("dpdo.Algorithm: a private run with SECURE randomness cannot be pickled: its noise "
                                "keys come from the operating system and exist only in this process. Save it "
                                "encrypted with alg.save(path, key=<32 bytes>) and resume with alg.load(path, "
                                "key=...), or use randomness=dpdo.RANDOMNESS_REPRODUCIBLE")
            import tempfile
            d = tempfile.mkdtemp(prefix="dpdo-pickle-")
            try:
                p = os.path.join(d, "alg.ckpt")
                self._check(lib.dpdo_algorithm_save(h, os.fsencode(p), None))
                with open(p, "rb") as f:
                    ckpt = f.read()
            finally:
                for x in os.listdir(d):
                    os.unlink(os.path.join(d, x))
                os.rmdir(d)
        acc = None
        if self.accountant is not None:
            ledger = self.accountant.ledger
            led_text = self._start_ledger if ckpt is not None else ledger.save()
            if led_text is None:
                raise TypeError("dpdo.Algorithm cannot be pickled: the ledger as it was when this run started is "
                                "unknown (the run was started outside this object)")
            acc = (ledger.nodes, led_text, self.accountant._args[1:])
        pol = None
        if self.policy is not None:
            pol = (self.policy._args, self.policy._params)
        spec = {"kind": self.kind, "nodes": self.nodes, "network": self.network, "regularizer": self.regularizer,
                "accountant": acc, "params": list(self._set_params), "solver": self.solver,
                "compressor": self.compressor, "policy": pol, "node_probabilities": self._node_probs,
                "options": dict(self.options)}
        return (_restore_algorithm, (spec, ckpt))

    # properties and getters
    @property
    def round(self) -> int:
        """Rounds completed."""
        return lib.dpdo_algorithm_round(self._ptr())

    @property
    def state(self) -> str:
        """"EMPTY", "READY", "RUNNING", "DONE" or "FAILED"."""
        return STATE_NAMES.get(lib.dpdo_algorithm_state(self._ptr()), "?")

    @property
    def stop_reason(self) -> str:
        """Why the run is done ("max rounds", "budget", "tolerance", "passes complete", "none")."""
        return STOP_NAMES.get(lib.dpdo_algorithm_stop_reason(self._ptr()), "?")

    @property
    def dim(self) -> int:
        """Model dimension."""
        return self._dim

    @_guarded(mutating=False)
    def _get(self, fn, node, *pre):
        out, p = empty_doubles(self._dim)
        self._check(fn(self._ptr(), *pre, node, p, self._dim))
        return result(out, self._dim)

    def iterate(self, node=NODE_ALL):
        """x_i of a node, or the average (NODE_ALL)."""
        return self._get(lib.dpdo_algorithm_get_iterate, node)

    def output(self, node=NODE_ALL):
        """The algorithm's output of a node, or the average (NODE_ALL)."""
        return self._get(lib.dpdo_algorithm_get_output, node)

    def state_row(self, name, node=NODE_ALL):
        """A named state row ("z", "x", "s" for DP-DDA)."""
        return self._get(lib.dpdo_algorithm_get_state, node, name.encode())

    @property
    def active(self) -> "List[int]":
        """Which nodes computed in the last round (list of 0/1)."""
        buf = (C.c_int32 * self._n)()
        self._check(self._call("active", lib.dpdo_algorithm_get_active, buf, self._n, mutating=False))
        return list(buf)

    @_guarded(mutating=False)
    def privacy(self, kind=PRIVACY_RIGOROUS, node=NODE_ALL) -> "Tuple[float, float, bool]":
        """(epsilon, delta, valid) spent so far: kind PRIVACY_RIGOROUS (the accountant) or
        PRIVACY_PAPER (the paper's bound; valid = False when a precondition fails)."""
        e, d, v = C.c_double(), C.c_double(), C.c_int32()
        self._check(lib.dpdo_algorithm_privacy(self._ptr(), kind, node, C.byref(e), C.byref(d), C.byref(v)))
        return e.value, d.value, bool(v.value)

    @property
    def epsilon(self) -> float:
        """Rigorous epsilon of the worst node."""
        return self.privacy()[0]

    def privacy_source(self, kind=PRIVACY_RIGOROUS) -> str:
        """Where a privacy figure comes from (the accountant's or the theorem's name)."""
        return text(lib.dpdo_algorithm_privacy_source(self._ptr(), kind))

    @property
    def privacy_notes(self) -> str:
        """Notes on the privacy figures (violated preconditions, assumptions)."""
        return text(lib.dpdo_algorithm_privacy_notes(self._ptr()))

    @_guarded(mutating=False)
    def set_log(self, handler="logging", level=LOG_NOTE) -> None:
        """Receive the run's log (docs/logging.md): each privacy note (LOG_NOTE, or LOG_WARN for
        the warnings), the calibration decision after prepare and a summary when a run stops
        (LOG_INFO), failures (LOG_ERROR); messages of level >= level. handler "logging" (the
        default): the "dpdo" logger of Python's logging module, at the message's level (25 is
        named NOTE); a function handler(level, topic, message); None: silent (the default of a
        new Algorithm). Called on the thread that steps or runs; an exception raised by the
        handler is ignored (the run goes on)."""
        h = self._ptr()
        if handler is None:
            self._check(lib.dpdo_algorithm_set_log(h, None, None, int(level)))
            self._log_cb = None
            return
        if handler == "logging":
            if logging.getLevelName(LOG_NOTE) == "Level %d" % LOG_NOTE:
                logging.addLevelName(LOG_NOTE, "NOTE")
            logger = logging.getLogger("dpdo")

            def handler(lv, topic, message):
                logger.log(lv, "%s: %s", topic, message)
        elif not callable(handler):
            raise InvalidArgument(_lib.E_INVAL, "set_log: handler must be \"logging\", a function or None")
        fn = handler

        def forward(user, lv, topic, message):
            try:
                fn(lv, text(topic), text(message))
            except BaseException:  # noqa: B036 -- never unwind through the C run
                pass
        cfn = _capi.dpdo_log_fn(forward)
        self._check(lib.dpdo_algorithm_set_log(h, cfn, None, int(level)))
        self._log_cb = cfn  # kept alive as long as the C side may call it

    @_guarded(mutating=False)
    def planned_releases(self, node=NODE_ALL) -> int:
        """Releases per node the rigorous sigma was planned for (NODE_ALL: the largest); after
        prepare. Raises for runs whose sigma was not calibrated by the accountant."""
        c = C.c_int64()
        self._check(lib.dpdo_algorithm_planned_releases(self._ptr(), node, C.byref(c)))
        return c.value

    @_guarded(mutating=False)
    def comm(self, node=NODE_ALL) -> "Tuple[int, int, int]":
        """(messages, scalars, bytes) sent by a node (NODE_ALL: total; NODE_COORDINATOR)."""
        m, s, b = C.c_int64(), C.c_int64(), C.c_int64()
        self._check(lib.dpdo_algorithm_comm(self._ptr(), node, C.byref(m), C.byref(s), C.byref(b)))
        return m.value, s.value, b.value

    @_guarded(mutating=False)
    def objective(self, point=POINT_OUTPUT, node=NODE_ALL, x=None) -> float:
        """F at the run's output/iterate, or at a given x."""
        F = C.c_double()
        if x is not None:
            k, px, n = as_doubles(x, self._dim, "x")
            rc = lib.dpdo_algorithm_objective_at(self._ptr(), px, n, C.byref(F))
        else:
            rc = lib.dpdo_algorithm_objective(self._ptr(), point, node, C.byref(F))
        if rc < 0:
            self._fail(rc)
        return F.value

    def model(self) -> "Model":
        """The trained model (output, loss, regularizer, rounds, privacy spent) as a Model, which
        saves to a model file and pickles."""
        return Model.from_algorithm(self)


    def _describe(self):
        return "%s, %d nodes, dim %d, round %d/%d, %s" % (self.kind, self._n, self._dim, self.round,
                                                          self.options["max_rounds"], self.state)


def _restore_model(text_):
    return Model.parse(text_)


_PREDICT_KINDS = {"margin": _capi.DPDO_PREDICT_MARGIN, "label": _capi.DPDO_PREDICT_LABEL,
                  "probability": _capi.DPDO_PREDICT_PROBABILITY}


class Model(_Handle):
    """A trained linear model in libdpdo's model-file format (docs/model.md): the output vector x,
    loss, regularizer, algorithm, rounds, the privacy spent (epsilon, delta, accountant) and the
    library version.

        m = alg.model()                      # or Model.from_algorithm(alg), Model.load(path)
        m.save("run.model"); Model.load("run.model").predict(test_set, "label")

    Pickles through the same text (identical bits)."""

    _destroy = lib.dpdo_model_destroy
    _errmsg = lib.dpdo_model_errmsg

    def __init__(self):
        super().__init__()
        self._h = _new(lib.dpdo_model_create, "model: out of memory")
        self._own()

    @classmethod
    def from_algorithm(cls, alg) -> "Model":
        """The model of a run: its averaged output, loss, regularizer, rounds and rigorous privacy."""
        m = cls()
        took = alg._enter("model", mutating=False)
        try:
            m._check(lib.dpdo_model_from_algorithm(m._ptr(), alg._ptr()))
        finally:
            alg._leave(took)
        return m

    @classmethod
    def from_vector(cls, x, loss="logistic", algorithm="external") -> "Model":
        """A model from a weight vector trained elsewhere (not private: epsilon = inf)."""
        m = cls()
        k, px, n = as_doubles(x)
        m._check(lib.dpdo_model_set(m._ptr(), px, n, loss.encode(), algorithm.encode()))
        return m

    @classmethod
    def load(cls, path, key=None) -> "Model":
        """Read a model file (untrusted input: every field is checked). Its integrity line is
        verified first: an edited or damaged file is refused (FormatError, "checksum mismatch");
        with `key` (bytes, 16..64) only a file with a valid MAC under that key loads, without one
        an authenticated file is refused. A file written by 0.2 (no integrity line) loads, with
        integrity "none"."""
        m = cls()
        if key is not None:
            m.set_key(key)
        m._check(lib.dpdo_model_load(m._ptr(), str(path).encode()))
        return m

    @classmethod
    def parse(cls, text_, name="<string>", key=None) -> "Model":
        """Read a model from its text (verified as load() does)."""
        m = cls()
        if key is not None:
            m.set_key(key)
        b = text_.encode() if isinstance(text_, str) else bytes(text_)
        m._check(lib.dpdo_model_parse(m._ptr(), b, len(b), name.encode()))
        return m

    @_guarded()
    def set_key(self, key) -> None:
        """The key (bytes, 16..64; None removes it) of the keyed BLAKE2b-256 MAC that save() then
        writes and load()/parse() on this object require (docs/model.md)."""
        _set_mac_key(self, lib.dpdo_model_set_key, key)

    @property
    def integrity(self) -> str:
        """How the content was verified: "mac", "checksum", "none" (a 0.2 file without an integrity
        line) or "local" (built in this process)."""
        v = lib.dpdo_model_integrity(self._ptr())
        return {0: "none", 1: "checksum", 2: "mac", 3: "local"}.get(v, "empty")

    @_guarded(mutating=False)
    def save(self, path) -> None:
        """Write the model file durably (temporary file, fsync, rename, directory fsync: the old or
        the new model survives a crash) with a checksum, or a MAC when a key is set; doubles with 17
        digits: loading gives identical bits."""
        self._check(lib.dpdo_model_save(self._ptr(), str(path).encode()))

    def text(self) -> str:
        """The model file's text."""
        import os
        import tempfile
        fd, path = tempfile.mkstemp(suffix=".model")
        os.close(fd)
        key = getattr(self, "_key", None)
        try:
            if key:  # the text (and a pickle) carries a checksum, never a MAC under the key
                self.set_key(None)
            self.save(path)
            with open(path) as f:
                return f.read()
        finally:
            if key:
                self.set_key(key)
            os.unlink(path)

    @property
    def dim(self) -> int:
        """Dimension of x."""
        return lib.dpdo_model_dim(self._ptr())

    @property
    def rounds(self) -> int:
        """Rounds the run made."""
        return lib.dpdo_model_rounds(self._ptr())

    @property
    def x(self):
        """The weight vector."""
        d = self.dim
        out, p = empty_doubles(d)
        self._check(lib.dpdo_model_get_x(self._ptr(), p, d))
        return result(out, d)

    def field(self, name) -> str:
        """A text field: "loss", "regularizer", "algorithm", "accountant" or "library"."""
        return text(lib.dpdo_model_text(self._ptr(), name.encode()))

    @property
    def privacy(self) -> "Tuple[float, float]":
        """(epsilon, delta) stored with the model (epsilon inf: not private)."""
        e, d = C.c_double(), C.c_double()
        self._check(lib.dpdo_model_privacy(self._ptr(), C.byref(e), C.byref(d)))
        return e.value, d.value

    @_guarded(mutating=False)
    def predict(self, data, kind="label"):
        """Margins, labels (+-1) or probabilities (logistic loss) for every row of a Dataset (or of
        a 2-D array, copied into one with zero labels)."""
        if kind not in _PREDICT_KINDS:
            raise InvalidArgument(_lib.E_INVAL, "kind must be 'margin', 'label' or 'probability', not %r" % (kind,))
        ds = data
        if not isinstance(data, Dataset):
            if hasattr(data, "tocsr"):
                ds = Dataset.csr(data, [0.0] * data.shape[0])
            else:
                n = len(data)
                ds = Dataset(data, [0.0] * n)
        n = ds.rows
        out, p = empty_doubles(n)
        self._check(lib.dpdo_model_predict(self._ptr(), ds._ptr(), _PREDICT_KINDS[kind], p, n))
        return result(out, n)

    def __reduce__(self):
        return (_restore_model, (self.text(),))

    def _describe(self):
        if self.dim == 0:
            return "empty"
        e, d = self.privacy
        return "%s, %s loss, dim %d, %d rounds, epsilon %g at delta %g (%s)" % (
            self.field("algorithm"), self.field("loss"), self.dim, self.rounds, e, d, self.field("accountant"))


_ReferenceOptions = _capi.dpdo_reference_options


class Reference(_Handle):
    """The centralised reference solver: the exact minimiser x* and F* of
    F(x) = sum_i omega_i f_i(x) + h(x) over the nodes (L-BFGS, FISTA or dual coordinate descent,
    chosen automatically; see include/dpdo/reference.h).

        ref = Reference(nodes, regularizer, weighting=WEIGHT_SAMPLES, tol=0, max_iter=0)
        x, F = ref.solve(); ref.method, ref.certificate, ref.iterations, ref.objective(x)

    Borrows the nodes and regularizer (kept alive)."""

    _destroy = lib.dpdo_reference_destroy
    _errmsg = lib.dpdo_reference_errmsg

    def __init__(self, nodes, regularizer=None, weighting=WEIGHT_SAMPLES, tol=0.0, max_iter=0):
        super().__init__()
        nodes = list(nodes)
        if not nodes:
            raise InvalidArgument(_lib.E_INVAL, "Reference: at least one node is needed")
        o = _fill(_ReferenceOptions, lib.dpdo_reference_options_init, {"weighting": weighting, "tol": tol},
                  "reference options")
        if max_iter:
            o.max_iter = max_iter
        arr = (C.c_void_p * len(nodes))(*[n.handle for n in nodes])
        h = C.c_void_p()
        rc = lib.dpdo_reference_create(C.byref(h), arr, len(nodes), regularizer._ptr() if regularizer else None,
                                       C.byref(o))
        if rc < 0:
            raise error(rc, "reference solver: nodes and regularizer must share one dimension (%s)"
                        % _lib._status_name(rc))
        self._h = h
        self._own()
        self._borrow(regularizer, *nodes)
        self.nodes, self.regularizer = nodes, regularizer
        self._dim = nodes[0].loss.dim

    @_guarded()
    def solve(self) -> "Tuple[Any, float]":
        """(x*, F*). Raises NumericError if the tolerance was not reached (x, F still usable via
        the exception's .x and .F)."""
        out, p = empty_doubles(self._dim)
        F = C.c_double()
        rc = lib.dpdo_reference_solve(self._ptr(), p, self._dim, C.byref(F))
        if rc < 0:
            err = error(rc, self.message())
            err.x, err.F = result(out, self._dim), F.value
            raise err
        return result(out, self._dim), F.value

    @_guarded(mutating=False)
    def objective(self, x) -> float:
        """F(x)."""
        k, px, n = as_doubles(x, self._dim, "x")
        F = C.c_double()
        self._check(lib.dpdo_reference_objective(self._ptr(), px, n, C.byref(F)))
        return F.value

    @property
    def certificate(self) -> float:
        """After solve(): a proven bound on F(x*) - F* (NaN if uncertified)."""
        return lib.dpdo_reference_certificate(self._ptr())

    @property
    def iterations(self) -> int:
        """Iterations used by the last solve()."""
        return lib.dpdo_reference_iterations(self._ptr())

    @property
    def method(self) -> str:
        """The method used ("lbfgs", "fista", "dual-cd", ...)."""
        return text(lib.dpdo_reference_method(self._ptr()))

    def _why_not_picklable(self):
        return ": rebuild it from its (picklable) nodes and regularizer"

    def _describe(self):
        return "%d nodes, dim %d, method %s" % (len(self.nodes), self._dim, self.method or "-")


__all__ = ["Model", "Reference", "Progress", "accountant_types", "RANDOMNESS_SECURE", "RANDOMNESS_REPRODUCIBLE",
           "WEIGHT_SAMPLES", "WEIGHT_NODES", "WEIGHT_NODE_WEIGHTS", "Dataset", "Shard", "Loss", "Regularizer", "Node", "Network", "Sampling", "Event", "Ledger",
           "Accountant", "PaperBound", "Solver", "Compressor", "Policy", "Algorithm", "algorithm_types", "param_key", "parameters", "ParamInfo", "version",
           "NODE_ALL", "NODE_COORDINATOR", "NOISE_NONE", "NOISE_PAPER", "NOISE_RIGOROUS", "NOISE_FIXED",
           "PRIVACY_RIGOROUS", "PRIVACY_PAPER", "POINT_ITERATE", "POINT_OUTPUT",
           "LOG_DEBUG", "LOG_INFO", "LOG_NOTE", "LOG_WARN", "LOG_ERROR"]
