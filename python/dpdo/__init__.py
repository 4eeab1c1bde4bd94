# SPDX-License-Identifier: BSD-3-Clause
"""dpdo: differentially private distributed optimization (Python binding of libdpdo over ctypes).

scikit-learn estimators: dpdo.sklearn (DPDDAClassifier, DOADPClassifier, DPWORSGDClassifier,
FedPLTClassifier); Opacus/TF Privacy style calculators: dpdo.privacy. The low-level API:

    import dpdo
    ds = dpdo.Dataset.generate("epsilon-like", n=2000, d=20, seed=1)
    loss = dpdo.Loss("logistic", ds.features)
    nodes = [dpdo.Node(s, loss) for s in ds.partition([250] * 8)]
    net = dpdo.Network.ring(8)
    acc = dpdo.Accountant(dpdo.Ledger(8))
    alg = dpdo.Algorithm("dp-dda", nodes, net, dpdo.Regularizer("l2", ds.features, 0.01), acc,
                         max_rounds=500, epsilon=1.0)
    for t in alg: pass
    print(alg.output(), alg.privacy())

See docs/python.md for lifetimes, arrays, callbacks and errors.
"""
from ._lib import (DpdoError, InvalidArgument, OutOfMemory, StateError, CallbackError, NumericError, BudgetError,
                   VersionError, Unsupported, IOFailure, FormatError, Canceled, MisuseError, has_numpy, LIBRARY_PATH,
                   LIBRARY_SOURCE, LIBRARY_VERSION, LibraryVersionWarning, ABI_MAJOR)
from ._core import *  # noqa: F401,F403
from ._core import __all__ as _core_all
from . import _capi

# the release of the headers this package was generated from (include/dpdo/version.h)
__version__ = "%d.%d.%d" % (_capi.DPDO_VERSION_MAJOR, _capi.DPDO_VERSION_MINOR, _capi.DPDO_VERSION_PATCH)
# the file of the libdpdo that was loaded (LIBRARY_SOURCE: how it was found; dpdo._lib's docstring)
library_path = LIBRARY_PATH
__all__ = list(_core_all) + ["DpdoError", "InvalidArgument", "OutOfMemory", "StateError", "CallbackError",
                             "NumericError", "BudgetError", "VersionError", "Unsupported", "IOFailure",
                             "FormatError", "Canceled", "MisuseError", "has_numpy", "LIBRARY_PATH", "LIBRARY_SOURCE",
                             "LIBRARY_VERSION", "LibraryVersionWarning", "library_path", "ABI_MAJOR"]
