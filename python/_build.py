# SPDX-License-Identifier: BSD-3-Clause
"""A PEP 517 build backend for this pure-Python package, kept in the tree so that
`pip install ./python` works offline: nothing is downloaded and nothing is compiled
(the package is Python files over ctypes; libdpdo itself comes from `make install`)."""
import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME, VERSION = "dpdo", "0.3.0"
HERE = os.path.dirname(os.path.abspath(__file__))
DIST = "%s-%s.dist-info" % (NAME, VERSION)
METADATA = """Metadata-Version: 2.1
Name: %s
Version: %s
Summary: Python binding (ctypes) of libdpdo: differentially private distributed optimization
License: BSD-3-Clause
Requires-Python: >=3.8
Provides-Extra: numpy
Requires-Dist: numpy; extra == "numpy"
""" % (NAME, VERSION)
WHEEL = "Wheel-Version: 1.0\nGenerator: dpdo-_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _package_files():
    pkg = os.path.join(HERE, NAME)
    return sorted(os.path.join(NAME, f) for f in os.listdir(pkg)
                  if f.endswith(".py") or f == "py.typed" or f == "libdpdo.so.1")


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, DIST)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(METADATA)
    with open(os.path.join(d, "WHEEL"), "w") as f:
        f.write(WHEEL)
    return DIST


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        entries = [(f, open(os.path.join(HERE, f), "rb").read()) for f in _package_files()]
        entries += [(DIST + "/METADATA", METADATA.encode()), (DIST + "/WHEEL", WHEEL.encode())]
        for name, data in entries:
            z.writestr(name, data)
            records.append(_record_line(name, data))
        records.append(DIST + "/RECORD,,")
        z.writestr(DIST + "/RECORD", "\n".join(records) + "\n")
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, VERSION)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for f in ["pyproject.toml", "_build.py", "README.md"] + _package_files():
            t.add(os.path.join(HERE, f), arcname=os.path.join(base, f))
        info = tarfile.TarInfo(os.path.join(base, "PKG-INFO"))
        data = METADATA.encode()
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name
