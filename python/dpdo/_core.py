# SPDX-License-Identifier: BSD-3-Clause
"""Pythonic classes over the libdpdo handles.

Lifetime: every class owns one C handle, freed by close() (idempotent), by the context manager,
or by a finalizer when the object is collected. Objects that C borrows are kept alive by the
Python objects that borrow them: a Node holds its Dataset/Shard and Loss, an Algorithm holds its
nodes, network, regularizer, accountant, solver, compressor and policy. Closing an object that
something still borrows is refused (StateError) instead of leaving C with a dangling pointer.
"""
import ctypes as C
import math
import weakref

from . import _lib
from ._lib import (lib, np, P, PD, PI64, PI32, I64, D, DpdoError, StateError, InvalidArgument, CallbackError,
                   error, text, as_doubles, as_int64, as_int32, empty_doubles, result)

NODE_ALL = -1
NODE_COORDINATOR = -2
NOISE_NONE, NOISE_PAPER, NOISE_RIGOROUS, NOISE_FIXED = 0, 1, 2, 3
RANDOMNESS_SECURE, RANDOMNESS_REPRODUCIBLE = 0, 1
PRIVACY_RIGOROUS, PRIVACY_PAPER = 0, 1
POINT_ITERATE, POINT_OUTPUT = 0, 1
STATE_NAMES = {0: "EMPTY", 1: "READY", 2: "RUNNING", 3: "DONE", 4: "FAILED"}
STOP_NAMES = {0: "none", 1: "max rounds", 2: "budget", 3: "tolerance", 4: "passes complete"}


def version():
    """The loaded library's version string ("0.1.0")."""
    return text(lib.dpdo_version_string())


def _free_handle(destroy, h):
    if h.value:
        destroy(h)
        h.value = None


class _Handle:
    """Base: owns self._h (a c_void_p), destroyed by `_destroy` exactly once."""

    _destroy = None
    _errmsg = None

    def __init__(self):
        self._h = C.c_void_p()
        self._borrowers = 0
        self._deps = []
        self._fin = None

    def _own(self):
        self._fin = weakref.finalize(self, _free_handle, type(self)._destroy, self._h)

    @property
    def handle(self):
        """The raw C pointer (int); raises ValueError after close()."""
        if not self._h.value:
            raise ValueError("%s is closed" % type(self).__name__)
        return self._h.value

    def _ptr(self):
        if not self._h.value:
            raise ValueError("%s is closed" % type(self).__name__)
        return self._h

    def message(self):
        """The handle's message about its last failure."""
        if not self._h.value or type(self)._errmsg is None:
            return ""
        return text(type(self)._errmsg(self._h))

    def _check(self, rc, what=""):
        if rc < 0:
            raise error(rc, self.message() or what or _lib._status_name(rc))
        return rc

    def close(self):
        """Free the C handle now (safe to call twice)."""
        if self._borrowers > 0:
            raise StateError(_lib.E_STATE, "%s is still used by %d other object(s); close them first"
                             % (type(self).__name__, self._borrowers))
        if self._fin is not None:
            self._fin()
        for d in self._deps:
            d._borrowers -= 1
        self._deps = []

    def _borrow(self, *objs):
        for o in objs:
            if o is not None:
                o._borrowers += 1
                self._deps.append(o)

    @property
    def closed(self):
        return not self._h.value

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        # the finalizer frees the handle; release the borrow counts of what we used
        for d in getattr(self, "_deps", []):
            d._borrowers -= 1


def _new(fn, what, *args):
    h = C.c_void_p()
    rc = fn(C.byref(h), *args)
    if rc < 0:
        raise error(rc, what)
    return h


# ---- options structs (layouts of the C headers) --------------------------------------------------
class _GenerateOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("seed", C.c_uint64), ("n", C.c_int64), ("d", C.c_int64),
                ("density", C.c_double), ("label_noise", C.c_double), ("separation", C.c_double),
                ("zipf_exponent", C.c_double), ("scale", C.c_double), ("independent_labels", C.c_int32),
                ("n_agents", C.c_int32), ("shift_scale", C.c_double), ("normalize_rows", C.c_int32)]


class _LoadOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("n_features", C.c_int64), ("layout", C.c_int32),
                ("dense_threshold", C.c_double), ("label_map", C.c_int32), ("positive_label", C.c_double),
                ("reject_qid", C.c_int32), ("label_column", C.c_int32), ("header", C.c_int32),
                ("delimiter", C.c_int32), ("scale", C.c_int32)]


class _AlgorithmOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("seed", C.c_uint64), ("max_rounds", C.c_int64),
                ("step_size", C.c_double), ("step_power", C.c_double), ("noise_mode", C.c_int32),
                ("strict", C.c_int32), ("epsilon", C.c_double), ("delta", C.c_double),
                ("max_epsilon", C.c_double), ("sigma", C.c_double), ("lipschitz", C.c_double),
                ("clip", C.c_double), ("batch", C.c_int64), ("tol", C.c_double), ("check_every", C.c_int64),
                ("weighting", C.c_int32), ("randomness", C.c_int32)]


class _AccountantOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("orders", PD), ("n_orders", C.c_int64),
                ("conversion", C.c_int32), ("reserved0", C.c_int32)]


def _fill(struct_cls, init, kwargs, what):
    o = struct_cls()
    rc = init(C.byref(o), C.sizeof(o))
    if rc < 0:
        raise error(rc, "%s: this package's struct does not match the library (%s)" % (what, _lib._status_name(rc)))
    for k, v in kwargs.items():
        if k == "struct_size" or k not in dict(struct_cls._fields_):
            raise InvalidArgument(_lib.E_INVAL, "%s: unknown option %r" % (what, k))
        setattr(o, k, v)
    return o


# ---- data ----------------------------------------------------------------------------------------
class Dataset(_Handle):
    """Samples (rows) with labels. Dataset(X, y) copies a 2-D float array (NumPy, or lists);
    Dataset.csr(matrix, y) takes a SciPy CSR matrix (or indptr/indices/data);
    Dataset.libsvm(path), Dataset.idx(images, labels) and Dataset.generate(kind, ...) load or
    synthesise one."""

    _destroy = lib.dpdo_dataset_destroy
    _errmsg = lib.dpdo_dataset_errmsg

    def __init__(self, X=None, y=None):
        super().__init__()
        self._h = _new(lib.dpdo_dataset_create, "dataset: out of memory")
        self._own()
        if X is not None:
            self.set_dense(X, y)

    def set_dense(self, X, y):
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
        keep, px, nx = as_doubles(Xa, n * d, "X")
        keepy, py, ny = as_doubles(y, n, "y")
        self._check(lib.dpdo_dataset_set_dense(self._ptr(), n, d, px, py, 0))
        return self

    @classmethod
    def csr(cls, matrix=None, y=None, indptr=None, indices=None, data=None, n_features=None):
        """From a SciPy CSR matrix (or its three arrays and n_features)."""
        if matrix is not None:
            m = matrix.tocsr()
            indptr, indices, data, shape = m.indptr, m.indices, m.data, m.shape
            n, d = shape
        else:
            n, d = len(indptr) - 1, n_features
        ds = cls()
        k1, pr, _ = as_int64(indptr)
        k2, pc, _ = as_int32(indices)
        k3, pv, _ = as_doubles(data)
        k4, py, _ = as_doubles(y, n, "y")
        ds._check(lib.dpdo_dataset_set_csr(ds._ptr(), n, d, pr, pc, pv, py, 0))
        return ds

    @classmethod
    def libsvm(cls, path, binary_labels=True, n_features=0):
        ds = cls()
        o = _fill(_LoadOptions, lib.dpdo_load_options_init, {}, "load options")
        o.label_map = 1 if binary_labels else 0
        o.n_features = n_features
        ds._check(lib.dpdo_dataset_load_libsvm(ds._ptr(), str(path).encode(), C.byref(o)))
        return ds

    @classmethod
    def idx(cls, images, labels):
        ds = cls()
        ds._check(lib.dpdo_dataset_load_idx(ds._ptr(), str(images).encode(), str(labels).encode(), None))
        return ds

    @classmethod
    def generate(cls, kind="epsilon-like", n=1000, d=100, seed=1, **options):
        """A seeded synthetic set ("epsilon-like", "rcv1-like", "fedplt-logistic", "covtype-like")."""
        ds = cls()
        o = _fill(_GenerateOptions, lib.dpdo_generate_options_init, dict(options, n=n, d=d, seed=seed),
                  "generate options")
        ds._check(lib.dpdo_dataset_generate(ds._ptr(), kind.encode(), C.byref(o)))
        return ds

    @property
    def rows(self):
        return lib.dpdo_dataset_rows(self._ptr())

    @property
    def features(self):
        return lib.dpdo_dataset_features(self._ptr())

    def labels(self):
        n = self.rows
        out, p = empty_doubles(n)
        self._check(lib.dpdo_dataset_get_labels(self._ptr(), p, n))
        return result(out, n)

    def margins(self, w):
        n, d = self.rows, self.features
        kw, pw, _ = as_doubles(w, d, "w")
        out, p = empty_doubles(n)
        self._check(lib.dpdo_dataset_margins(self._ptr(), pw, d, p, n))
        return result(out, n)

    def partition(self, sizes, seed=0):
        """Random disjoint shards of the given sizes: a list of Shard."""
        k, ps, m = as_int64(sizes)
        arr = (C.c_void_p * m)()
        self._check(lib.dpdo_dataset_partition(self._ptr(), m, ps, seed, arr))
        return [Shard._wrap(arr[i], self) for i in range(m)]

    def shard(self, first, count):
        """Rows first .. first+count-1 as a Shard."""
        h = C.c_void_p()
        self._check(lib.dpdo_shard_create_range(C.byref(h), self._ptr(), first, count))
        return Shard._wrap(h.value, self)


class Shard(_Handle):
    """A view of some rows of a Dataset (keeps the dataset alive)."""

    _destroy = lib.dpdo_shard_destroy
    _errmsg = lib.dpdo_shard_errmsg

    @classmethod
    def _wrap(cls, ptr, ds):
        s = cls.__new__(cls)
        _Handle.__init__(s)
        s._h = C.c_void_p(ptr)
        s._own()
        s._borrow(ds)
        return s

    @property
    def rows(self):
        return lib.dpdo_shard_rows(self._ptr())


# ---- losses, regularizers, nodes -----------------------------------------------------------------
_PHI = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_double, C.c_double, PD, PD)
_BATCH = C.CFUNCTYPE(C.c_int, C.c_void_p, PD, C.c_int64, PI64, C.c_int64, PD, PD)
_MODEL = C.CFUNCTYPE(C.c_int, C.c_void_p, PD, C.c_int64, PD, PD)
_BOUNDS = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_double, C.c_double, PD, PD)
_CONST = C.CFUNCTYPE(C.c_int, C.c_void_p, PD, PD)
_RELEASE = C.CFUNCTYPE(None, C.c_void_p)


class _LossType(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("name", C.c_char_p), ("phi", _PHI), ("batch", _BATCH),
                ("model", _MODEL), ("phi_bounds", _BOUNDS), ("constants", _CONST), ("release", _RELEASE)]


class _Callbacks:
    """Python callbacks called from C: an exception is stored here and the callback returns 1,
    which the library turns into DPDO_E_CALLBACK; the wrapper then re-raises it."""

    def __init__(self):
        self.exc = None

    def guard(self, fn):
        def call(*args):
            try:
                return int(fn(*args) or 0)
            except BaseException as e:  # noqa: B902 - every exception must stop at the C boundary
                if self.exc is None:
                    self.exc = e
                return 1
        return call

    def reraise(self, err):
        e, self.exc = self.exc, None
        if e is not None:
            raise err from e


class Loss(_Handle):
    """A per-sample loss. Loss("logistic", dim) / Loss("hinge", dim) / Loss("squared", dim) are
    built in. User losses: Loss.phi(f, dim) with f(margin, label) -> (loss, dloss) for linear
    models, or Loss.batch(f, dim) with f(x, rows) -> (loss_sum, grad_sum) over dataset rows
    (x and grad_sum are float arrays of length dim)."""

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

    @classmethod
    def _user(cls, name, dim, **fields):
        obj = cls.__new__(cls)
        _Handle.__init__(obj)
        obj.cb = _Callbacks()
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
    def phi(cls, fn, dim, name="python-phi", bound=None):
        """fn(margin, label) -> (loss, dloss). bound (optional): sup |phi'| for the privacy checks."""
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
    def batch(cls, fn, dim, name="python-batch"):
        """fn(x, rows) -> (loss_sum, grad_sum or None): rows are dataset row indices."""
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
    def dim(self):
        return lib.dpdo_loss_dim(self._ptr())

    @property
    def name(self):
        return text(lib.dpdo_loss_name(self._ptr()))


def _view(p, n):
    """A zero-copy NumPy view of n values at a C pointer (valid during the callback), or a list."""
    if np is not None:
        return np.ctypeslib.as_array(p, shape=(n,))
    return [p[k] for k in range(n)]


class Regularizer(_Handle):
    """h(x): Regularizer("l2", dim, lam), ("l1", dim, lam), ("elastic-net", dim, l1, l2), ..."""

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

    def value(self, x):
        k, px, n = as_doubles(x)
        v = C.c_double()
        self._check(lib.dpdo_regularizer_value(self._ptr(), px, n, C.byref(v)))
        return v.value


class Node(_Handle):
    """One participant: its shard (or a whole Dataset) and a loss. Node.remote(loss, samples)
    stands for a node whose data lives in another process."""

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
        self.loss = loss

    @classmethod
    def remote(cls, loss, samples, weight=1.0):
        obj = cls.__new__(cls)
        _Handle.__init__(obj)
        h = C.c_void_p()
        rc = lib.dpdo_node_create_remote(C.byref(h), loss._ptr(), samples, weight)
        if rc < 0:
            raise error(rc, loss.message())
        obj._h = h
        obj._own()
        obj._borrow(loss)
        obj.loss = loss
        return obj

    @property
    def samples(self):
        return lib.dpdo_node_samples(self._ptr())

    def evaluate(self, x, grad=False):
        """Mean loss over the node's data at x; with grad=True also the gradient."""
        k, px, n = as_doubles(x)
        v = C.c_double()
        g, pg = empty_doubles(n) if grad else (None, None)
        rc = lib.dpdo_node_eval(self._ptr(), px, n, None, 0, 0.0, C.byref(v), pg, None)
        if rc == _lib.E_CALLBACK and self.loss.cb is not None:
            self.loss.cb.reraise(error(rc, self.message()))
        self._check(rc)
        return (v.value, result(g, n)) if grad else v.value


# ---- networks ------------------------------------------------------------------------------------
class Network(_Handle):
    """A communication graph with gossip weights: Network.ring(n), .complete(n),
    .circulant(n, k), .torus(r, c), .star(n), .erdos_renyi(n, p, seed), .edges(n, pairs)."""

    _destroy = lib.dpdo_network_destroy
    _errmsg = lib.dpdo_network_errmsg

    def __init__(self):
        super().__init__()
        self._h = _new(lib.dpdo_network_create, "network: out of memory")
        self._own()

    @classmethod
    def _make(cls, fn, *args):
        net = cls()
        net._check(fn(net._ptr(), *args))
        return net

    @classmethod
    def ring(cls, n):
        return cls._make(lib.dpdo_network_set_ring, n)

    @classmethod
    def complete(cls, n):
        return cls._make(lib.dpdo_network_set_complete, n)

    @classmethod
    def circulant(cls, n, k):
        return cls._make(lib.dpdo_network_set_circulant, n, k)

    @classmethod
    def torus(cls, rows, cols):
        return cls._make(lib.dpdo_network_set_torus, rows, cols)

    @classmethod
    def star(cls, n):
        return cls._make(lib.dpdo_network_set_star, n)

    @classmethod
    def erdos_renyi(cls, n, p, seed=1, max_tries=100):
        return cls._make(lib.dpdo_network_set_erdos_renyi, n, p, seed, max_tries)

    @classmethod
    def edges(cls, n, pairs):
        flat = [int(v) for pr in pairs for v in pr]
        k, pe, m = as_int64(flat)
        return cls._make(lib.dpdo_network_set_edges, n, pe, m // 2)

    @property
    def nodes(self):
        return lib.dpdo_network_nodes(self._ptr())

    @property
    def edge_count(self):
        return lib.dpdo_network_edge_count(self._ptr())

    def spectral_gap(self):
        g = C.c_double()
        self._check(lib.dpdo_network_spectral_gap(self._ptr(), C.byref(g)))
        return g.value


# ---- privacy -------------------------------------------------------------------------------------
class Sampling(_Handle):
    """Who takes part in a release: Sampling() (everyone), Sampling.poisson(q), Sampling.wor(n, m)."""

    _destroy = lib.dpdo_sampling_destroy
    _errmsg = lib.dpdo_sampling_errmsg

    def __init__(self):
        super().__init__()
        self._h = _new(lib.dpdo_sampling_create, "sampling: out of memory")
        self._own()

    @classmethod
    def poisson(cls, q):
        s = cls()
        s._check(lib.dpdo_sampling_set_poisson(s._ptr(), q))
        return s

    @classmethod
    def wor(cls, n, m):
        s = cls()
        s._check(lib.dpdo_sampling_set_wor(s._ptr(), n, m))
        return s


class Event(_Handle):
    """One release: Event.gaussian(sensitivity, sigma, sampling=None), Event.laplace(...)."""

    _destroy = lib.dpdo_event_destroy
    _errmsg = lib.dpdo_event_errmsg

    def __init__(self):
        super().__init__()
        self._h = _new(lib.dpdo_event_create, "event: out of memory")
        self._own()

    @classmethod
    def gaussian(cls, sensitivity, sigma, sampling=None):
        e = cls()
        e._check(lib.dpdo_event_set_gaussian(e._ptr(), sampling._ptr() if sampling else None, sensitivity, sigma))
        return e

    @classmethod
    def laplace(cls, sensitivity, scale, sampling=None):
        e = cls()
        e._check(lib.dpdo_event_set_laplace(e._ptr(), sampling._ptr() if sampling else None, sensitivity, scale))
        return e


class Ledger(_Handle):
    """Per-node record of the releases charged (what an accountant reads)."""

    _destroy = lib.dpdo_ledger_destroy
    _errmsg = lib.dpdo_ledger_errmsg

    def __init__(self, nodes):
        super().__init__()
        self._h = _new(lib.dpdo_ledger_create, "ledger: invalid node count %r" % nodes, nodes)
        self._own()

    @property
    def nodes(self):
        return lib.dpdo_ledger_nodes(self._ptr())

    def charges(self, node):
        return lib.dpdo_ledger_charges(self._ptr(), node)

    def charge(self, event, count=1, nodes=None):
        if nodes is None:
            self._check(lib.dpdo_ledger_charge(self._ptr(), event._ptr(), count, None, -1))
        else:
            k, pn, m = as_int64(nodes)
            self._check(lib.dpdo_ledger_charge(self._ptr(), event._ptr(), count, pn, m))

    def reset(self):
        self._check(lib.dpdo_ledger_reset(self._ptr()))

    def save(self):
        """The ledger's checksummed text (str)."""
        n = C.c_int64()
        lib.dpdo_ledger_save(self._ptr(), None, 0, C.byref(n))
        buf = C.create_string_buffer(n.value + 1)
        self._check(lib.dpdo_ledger_save(self._ptr(), buf, n.value + 1, C.byref(n)))
        return buf.raw[:n.value].decode()

    def load(self, s):
        b = s.encode()
        self._check(lib.dpdo_ledger_load(self._ptr(), b, len(b)))


class Accountant(_Handle):
    """An accountant ("rdp", "exact", "zcdp", "pure") reading a ledger (kept alive)."""

    _destroy = lib.dpdo_accountant_destroy
    _errmsg = lib.dpdo_accountant_errmsg

    def __init__(self, ledger, kind="rdp", orders=None):
        super().__init__()
        t = lib.dpdo_accountant_type_find(kind.encode())
        if not t:
            raise InvalidArgument(_lib.E_INVAL, "unknown accountant %r (rdp, exact, zcdp, pure)" % kind)
        opts = None
        if orders is not None:
            self._orders, po, no = as_doubles(orders)
            o = _fill(_AccountantOptions, lib.dpdo_accountant_options_init, {}, "accountant options")
            o.orders, o.n_orders = po, no
            opts = C.byref(o)
        self._h = _new(lib.dpdo_accountant_create, "accountant: invalid options", t, ledger._ptr(), opts)
        self._own()
        self._borrow(ledger)
        self.ledger = ledger

    @property
    def name(self):
        return text(lib.dpdo_accountant_name(self._ptr()))

    def epsilon(self, delta, node=NODE_ALL):
        e = C.c_double()
        self._check(lib.dpdo_accountant_epsilon(self._ptr(), node, delta, C.byref(e), None))
        return e.value

    def delta(self, epsilon, node=NODE_ALL):
        d = C.c_double()
        self._check(lib.dpdo_accountant_delta(self._ptr(), node, epsilon, C.byref(d)))
        return d.value

    def calibrate_sigma(self, epsilon, delta, steps, sensitivity=1.0, sampling=None):
        s = C.c_double()
        self._check(lib.dpdo_accountant_calibrate_sigma(self._ptr(), sampling._ptr() if sampling else None,
                                                        sensitivity, steps, epsilon, delta, C.byref(s)))
        return s.value

    def calibrate_steps(self, epsilon, delta, sigma, sensitivity=1.0, sampling=None):
        s = C.c_double()
        self._check(lib.dpdo_accountant_calibrate_steps(self._ptr(), sampling._ptr() if sampling else None,
                                                        sensitivity, sigma, epsilon, delta, C.byref(s)))
        return s.value


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

    @staticmethod
    def types():
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
    def parameters(self):
        return self._names(lib.dpdo_paper_type_param)

    @property
    def outputs(self):
        return self._names(lib.dpdo_paper_type_output)

    @property
    def title(self):
        return text(lib.dpdo_paper_type_title(self._t))

    def set(self, name, value):
        self._check(lib.dpdo_paper_set(self._ptr(), name.encode(), float(value)))

    def evaluate(self):
        self._check(lib.dpdo_paper_evaluate(self._ptr()))
        out = {}
        for n in self.outputs:
            v = C.c_double()
            if lib.dpdo_paper_get(self._ptr(), n.encode(), C.byref(v)) == 0:
                out[n] = v.value
        return out

    @property
    def valid(self):
        return lib.dpdo_paper_valid(self._ptr()) == 1

    @property
    def violations(self):
        return text(lib.dpdo_paper_violations(self._ptr()))


# ---- local solvers, compressors, policies --------------------------------------------------------
_RUN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, PD, C.c_int64, C.c_double, C.c_int64, C.c_void_p,
                   C.c_uint64, C.c_uint64, PD)
_CONTR = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_double, C.c_int64, C.c_double, C.c_double, PD)


class _SolverType(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("name", C.c_char_p), ("run", _RUN), ("contraction", _CONTR),
                ("release", _RELEASE)]


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
        for k, v in params.items():
            self.set(k, v)

    @classmethod
    def python(cls, fn, dim, name="python-solver"):
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
        return obj

    def set(self, param, value):
        self._check(lib.dpdo_solver_set(self._ptr(), param.encode(), float(value)))

    def get(self, param):
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


# ---- algorithms ----------------------------------------------------------------------------------
def algorithm_types():
    """Names of the built-in algorithm types."""
    out, t = [], lib.dpdo_algorithm_type_next(None)
    while t:
        out.append(text(lib.dpdo_algorithm_type_name(t)))
        t = lib.dpdo_algorithm_type_next(t)
    return out


_PARAM_KEYS = {}


def param_key(name):
    """The integer key of a parameter name ("dda-active" or "dda_active")."""
    if not _PARAM_KEYS:
        for k in range(1, 1000):
            n = lib.dpdo_param_name(k)
            if n:
                _PARAM_KEYS[text(n)] = k
    key = _PARAM_KEYS.get(name.replace("_", "-"))
    if key is None:
        raise InvalidArgument(_lib.E_INVAL, "unknown parameter %r; known: %s" % (name, ", ".join(sorted(_PARAM_KEYS))))
    return key


class Algorithm(_Handle):
    """An algorithm run over nodes: Algorithm("dp-dda", nodes, network, regularizer, accountant,
    seed=..., max_rounds=..., noise_mode=..., epsilon=..., ...). Options are the fields of
    dpdo_algorithm_options; params= sets typed parameters by name ({"dda-active": 4}).

    step() runs one round and returns True, or False when the run is done (see stop_reason);
    iterating over the algorithm steps until done, yielding the round number."""

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
        nodes = list(nodes)
        arr = (C.c_void_p * max(len(nodes), 1))(*[n.handle for n in nodes])
        o = _fill(_AlgorithmOptions, lib.dpdo_algorithm_options_init, options, "algorithm options")
        self._check(lib.dpdo_algorithm_setup(self._ptr(), arr, len(nodes), network._ptr() if network else None,
                                             regularizer._ptr() if regularizer else None,
                                             accountant._ptr() if accountant else None, C.byref(o)))
        self._borrow(network, regularizer, accountant, *nodes)
        self.nodes, self.network, self.regularizer, self.accountant = nodes, network, regularizer, accountant
        self._dim = lib.dpdo_algorithm_dim(self._h)
        self._n = len(nodes)
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
        self._step_fn = lib.dpdo_algorithm_step

    def set_solver(self, solver):
        self._check(lib.dpdo_algorithm_set_solver(self._ptr(), solver._ptr()))
        self._borrow(solver)
        self.solver = solver

    # parameters
    def set(self, key, value):
        """Set a typed parameter by name or key."""
        k = param_key(key) if isinstance(key, str) else int(key)
        if lib.dpdo_param_type(k) == 0:
            self._check(lib.dpdo_algorithm_set_int(self._ptr(), k, int(value)))
        else:
            self._check(lib.dpdo_algorithm_set_double(self._ptr(), k, float(value)))

    def get(self, key):
        k = param_key(key) if isinstance(key, str) else int(key)
        if lib.dpdo_param_type(k) == 0:
            v = C.c_int64()
            self._check(lib.dpdo_algorithm_get_int(self._ptr(), k, C.byref(v)))
        else:
            v = C.c_double()
            self._check(lib.dpdo_algorithm_get_double(self._ptr(), k, C.byref(v)))
        return v.value

    def set_node_secret(self, node, secret):
        """Deprecated (64-bit): use set_node_key."""
        self._check(lib.dpdo_algorithm_set_node_secret(self._ptr(), node, secret))

    def set_node_key(self, node, key):
        """Key node's private streams by 32 bytes (bytes-like); kept across reset."""
        key = bytes(key)
        if len(key) != 32:
            raise ValueError("key must be 32 bytes, got %d" % len(key))
        self._check(lib.dpdo_algorithm_set_node_key(self._ptr(), node, key))

    @property
    def randomness_source(self):
        """'secure: ...' or 'reproducible: ...' (where the run's randomness comes from)."""
        return text(lib.dpdo_algorithm_randomness_source(self._ptr()))

    def prepare(self):
        self._check(lib.dpdo_algorithm_prepare(self._ptr()))

    def set_next_active(self, flags):
        """Which nodes compute in the next round only (a sequence of 0/1 per node); None cancels."""
        if flags is None:
            self._check(lib.dpdo_algorithm_set_next_active(self._ptr(), None, self._n))
            return
        k, pf, n = as_int32(flags)
        self._check(lib.dpdo_algorithm_set_next_active(self._ptr(), pf, n))

    def set_node_probabilities(self, p):
        """Per-node activation probabilities (a sequence of n values in (0, 1]); None = the key's."""
        if p is None:
            self._check(lib.dpdo_algorithm_set_node_probabilities(self._ptr(), None, self._n))
            return
        k, pp, n = as_doubles(p)
        self._check(lib.dpdo_algorithm_set_node_probabilities(self._ptr(), pp, n))

    # stepping
    def _fail(self, rc):
        err = error(rc, self.message())
        if rc == _lib.E_CALLBACK:
            for o in [n.loss for n in self.nodes] + [self.solver]:
                cb = getattr(o, "cb", None)
                if cb is not None and cb.exc is not None:
                    cb.reraise(err)
        raise err

    def step(self):
        """One round: True if it ran, False if the run is done (stop_reason says why)."""
        rc = self._step_fn(self._h)
        if rc == 1:
            return True
        if rc == 2:
            return False
        if not self._h.value:
            raise ValueError("Algorithm is closed")
        self._fail(rc)

    def run(self, max_steps=0):
        """Step up to max_steps rounds in C (0: until done); returns the rounds run."""
        n = C.c_int64()
        rc = lib.dpdo_algorithm_run(self._ptr(), max_steps, C.byref(n))
        if rc < 0:
            self._fail(rc)
        return n.value

    def __iter__(self):
        while self.step():
            yield self.round

    def reset(self):
        self._check(lib.dpdo_algorithm_reset(self._ptr()))

    # properties and getters
    @property
    def round(self):
        return lib.dpdo_algorithm_round(self._ptr())

    @property
    def state(self):
        return STATE_NAMES.get(lib.dpdo_algorithm_state(self._ptr()), "?")

    @property
    def stop_reason(self):
        return STOP_NAMES.get(lib.dpdo_algorithm_stop_reason(self._ptr()), "?")

    @property
    def dim(self):
        return self._dim

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
    def active(self):
        """Which nodes computed in the last round (list of 0/1)."""
        buf = (C.c_int32 * self._n)()
        self._check(lib.dpdo_algorithm_get_active(self._ptr(), buf, self._n))
        return list(buf)

    def privacy(self, kind=PRIVACY_RIGOROUS, node=NODE_ALL):
        """(epsilon, delta, valid) spent so far: kind PRIVACY_RIGOROUS (the accountant) or
        PRIVACY_PAPER (the paper's bound; valid = False when a precondition fails)."""
        e, d, v = C.c_double(), C.c_double(), C.c_int32()
        self._check(lib.dpdo_algorithm_privacy(self._ptr(), kind, node, C.byref(e), C.byref(d), C.byref(v)))
        return e.value, d.value, bool(v.value)

    @property
    def epsilon(self):
        """Rigorous epsilon of the worst node."""
        return self.privacy()[0]

    def privacy_source(self, kind=PRIVACY_RIGOROUS):
        return text(lib.dpdo_algorithm_privacy_source(self._ptr(), kind))

    @property
    def privacy_notes(self):
        return text(lib.dpdo_algorithm_privacy_notes(self._ptr()))

    def planned_releases(self, node=NODE_ALL):
        """Releases per node the rigorous sigma was planned for (NODE_ALL: the largest); after
        prepare. Raises for runs whose sigma was not calibrated by the accountant."""
        c = C.c_int64()
        self._check(lib.dpdo_algorithm_planned_releases(self._ptr(), node, C.byref(c)))
        return c.value

    def comm(self, node=NODE_ALL):
        """(messages, scalars, bytes) sent by a node (NODE_ALL: total; NODE_COORDINATOR)."""
        m, s, b = C.c_int64(), C.c_int64(), C.c_int64()
        self._check(lib.dpdo_algorithm_comm(self._ptr(), node, C.byref(m), C.byref(s), C.byref(b)))
        return m.value, s.value, b.value

    def objective(self, point=POINT_OUTPUT, node=NODE_ALL, x=None):
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


__all__ = ["Dataset", "Shard", "Loss", "Regularizer", "Node", "Network", "Sampling", "Event", "Ledger",
           "Accountant", "PaperBound", "Solver", "Compressor", "Policy", "Algorithm", "algorithm_types", "param_key", "version",
           "NODE_ALL", "NODE_COORDINATOR", "NOISE_NONE", "NOISE_PAPER", "NOISE_RIGOROUS", "NOISE_FIXED",
           "RANDOMNESS_SECURE", "RANDOMNESS_REPRODUCIBLE",
           "PRIVACY_RIGOROUS", "PRIVACY_PAPER", "POINT_ITERATE", "POINT_OUTPUT"]
