# SPDX-License-Identifier: BSD-3-Clause
"""Fashion-MNIST pairs from the Debian IDX files (shared by tests and benches)."""
import gzip

import numpy as np

FASHION = "/usr/share/datasets/fashion-mnist"


def fashion(kind, classes=(0, 2)):
    """Raw pixels (float64, n x 784) and labels of `classes` (default T-shirt 0 vs pullover 2) from
    the `kind` ("train" or "t10k") files."""
    X = np.frombuffer(gzip.open("%s/%s-images-idx3-ubyte.gz" % (FASHION, kind)).read(), np.uint8, offset=16)
    y = np.frombuffer(gzip.open("%s/%s-labels-idx1-ubyte.gz" % (FASHION, kind)).read(), np.uint8, offset=8)
    X = X.reshape(-1, 784).astype(np.float64)
    keep = np.isin(y, classes)
    return X[keep], y[keep]
