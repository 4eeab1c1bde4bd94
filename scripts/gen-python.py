#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate python/dpdo/_capi.py (the ctypes view of the C API) from include/dpdo/*.h.

Usage: scripts/gen-python.py [--include DIR] [OUT]   (DIR: the directory holding dpdo/*.h, default
the tree's include/; OUT defaults to standard output; `make python-capi`
writes python/dpdo/_capi.py, `make check-python-capi` regenerates into a temporary file and
diffs, like scripts/gen-map.sh / check-exports.sh do for the export map).

The headers are parsed by clang (`clang -Xclang -ast-dump=json -fsyntax-only`), so the types are
the compiler's, not a regex's guess; object-like #define constants are read from the headers
(numeric ones only). Every public header except mpi.h (libdpdo_mpi) is read. The output holds:

* CONSTANTS: every enumerator and numeric DPDO_* #define, as module-level names (DPDO_OK, ...);
* one ctypes.Structure per struct with a public definition, fields in declaration order, under
  the C typedef name (dpdo_algorithm_options, ...); STRUCTS lists them;
* one CFUNCTYPE per function-pointer typedef (dpdo_progress_fn, ...); function-pointer fields get
  the CFUNCTYPE of their signature (ctypes caches these, so equal signatures are one class);
* FUNCTIONS: name -> (restype, [argtypes]) for every DPDO_API function, in header order.

Type mapping: char pointers (char, unsigned char) -> c_char_p; void * and pointers to opaque
handles -> c_void_p; pointers to handles' pointers -> POINTER(c_void_p); pointers to public
structs -> POINTER(struct); other pointers -> POINTER(scalar); a callback that returns a char
pointer returns c_void_p (ctypes cannot keep a returned bytes object alive); a function's callback
parameter is c_void_p (it takes an instance of the callback type or None for NULL, which a CFUNCTYPE
argtype refuses), while struct fields keep their CFUNCTYPE. An unknown type stops
the generator with an error naming it, so a header change cannot slip through as a wrong guess.
Python 3 standard library only (plus the clang binary, $CLANG, default "clang").
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = os.path.join(ROOT, "include")
SKIP_HEADERS = {"mpi.h", "dpdo.h"}  # libdpdo_mpi; the umbrella header only includes the others

SCALARS = {
    "int": "C.c_int", "unsigned int": "C.c_uint", "long": "C.c_long", "unsigned long": "C.c_ulong",
    "long long": "C.c_longlong", "unsigned long long": "C.c_ulonglong", "short": "C.c_short",
    "unsigned short": "C.c_ushort", "char": "C.c_char", "signed char": "C.c_byte", "unsigned char": "C.c_ubyte",
    "double": "C.c_double", "float": "C.c_float", "_Bool": "C.c_bool", "bool": "C.c_bool",
    "size_t": "C.c_size_t", "ssize_t": "C.c_ssize_t",
    "int8_t": "C.c_int8", "int16_t": "C.c_int16", "int32_t": "C.c_int32", "int64_t": "C.c_int64",
    "uint8_t": "C.c_uint8", "uint16_t": "C.c_uint16", "uint32_t": "C.c_uint32", "uint64_t": "C.c_uint64",
}
CHARS = {"char", "unsigned char", "signed char"}


class GenError(Exception):
    pass


def headers():
    d = os.path.join(INCLUDE, "dpdo")
    return sorted(h for h in os.listdir(d) if h.endswith(".h") and h not in SKIP_HEADERS)


def clang_ast(hs):
    src = "".join('#include "dpdo/%s"\n' % h for h in hs)
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(src)
        name = f.name
    try:
        cmd = [os.environ.get("CLANG", "clang"), "-Xclang", "-ast-dump=json", "-fsyntax-only", "-std=c11",
               "-I", INCLUDE, name]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise GenError("cannot run %s (%s): install clang (scripts/install-deps.sh)" % (cmd[0], e))
        if r.returncode != 0:
            raise GenError("clang failed on the public headers:\n" + r.stderr)
        return json.loads(r.stdout)
    finally:
        os.unlink(name)


def walk_top(ast):
    """Top-level declarations of include/dpdo/*.h as (header, node), in source order. clang's JSON
    names a node's file only when it differs from the previous node's, so the file is tracked."""
    cur = None
    for n in ast.get("inner", []):
        for key in ("loc", "range"):
            loc = n.get(key, {})
            if key == "range":
                loc = loc.get("begin", {})
            loc = loc.get("expansionLoc", loc)
            if "file" in loc:
                cur = loc["file"]
                break
        if cur and os.path.basename(os.path.dirname(cur)) == "dpdo" and os.path.abspath(cur).startswith(INCLUDE):
            yield os.path.basename(cur), n


# ---- C type strings (as clang prints them) -> ctypes expressions -----------------------------
def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [] if out == ["void"] else out


class Types:
    def __init__(self):
        self.structs = {}   # typedef name -> True (complete, public definition)
        self.opaque = set()  # typedef names of incomplete structs (handles)
        self.fnptrs = {}    # typedef name -> CFUNCTYPE expression

    def base(self, s):
        s = re.sub(r"\b(const|volatile|struct|enum)\b", " ", s)
        return " ".join(s.split())

    def fnptr(self, s):
        """'R (*)(A, B)' -> CFUNCTYPE expression."""
        i = s.index("(*)")
        ret, args = s[:i].strip(), s[i + 3:].strip()
        if not (args.startswith("(") and args.endswith(")")):
            raise GenError("cannot parse function pointer type %r" % s)
        r = self.ctype(ret, callback_ret=True)
        a = [self.ctype(x) for x in split_args(args[1:-1])]
        return "C.CFUNCTYPE(%s)" % ", ".join([r] + a)

    def param(self, s):
        """A function parameter: callbacks (typedef'd or written out) travel as c_void_p."""
        b = self.base(s)
        if "(*)" in s or b in self.fnptrs:
            return "C.c_void_p"
        return self.ctype(s)

    def ctype(self, s, callback_ret=False):
        s = s.strip()
        if "(*)" in s:
            return self.fnptr(s)
        m = re.match(r"^(.*?)\s*\[(\d+)\]$", s)
        if m:
            return "(%s * %s)" % (self.ctype(m.group(1)), m.group(2))
        depth = s.count("*")
        b = self.base(s.replace("*", " "))
        if depth == 0:
            if b == "void":
                return "None"
            if b in SCALARS:
                return SCALARS[b]
            if b in self.structs:
                return b
            if b in self.fnptrs:
                return b
            if b.startswith("dpdo_") and b in self.opaque:
                raise GenError("opaque struct %s used by value" % b)
            raise GenError("unknown type %r" % s)
        # pointers
        if b in CHARS and depth == 1:
            return "C.c_void_p" if callback_ret else "C.c_char_p"
        if b == "void" or b in self.opaque:
            inner = "C.c_void_p"
        elif b in CHARS:
            inner = "C.c_char_p"
        elif b in self.structs or b in self.fnptrs:
            inner = "C.POINTER(%s)" % b
        elif b in SCALARS:
            inner = "C.POINTER(%s)" % SCALARS[b]
        else:
            raise GenError("unknown pointee type %r" % s)
        for _ in range(depth - 1):
            inner = "C.POINTER(%s)" % inner
        return inner


# ---- #define constants ------------------------------------------------------------------------
def defines(hs):
    out = []
    for h in hs:
        text = open(os.path.join(INCLUDE, "dpdo", h)).read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = text.replace("\\\n", " ")
        for line in text.splitlines():
            m = re.match(r"^\s*#\s*define\s+(DPDO_[A-Z0-9_]+)\s+(.+?)\s*$", line)
            if not m:
                continue
            name, val = m.group(1), m.group(2)
            v = re.sub(r"\((u?int(8|16|32|64)_t|size_t|double|int|long)\)", "", val)
            v = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)([uU]?[lL]{0,2}|[lL]{1,2}[uU]?)\b", r"\1", v)
            if not re.match(r"^[\s0-9a-fA-FxX.eE+\-*/()<>|&~]+$", v) or not re.search(r"\d", v):
                continue  # a string, an expression of other macros or an attribute: not a constant
            try:
                value = eval(v, {"__builtins__": {}}, {})  # digits and operators only (checked above)
            except Exception:
                continue
            out.append((h, name, value))
    return out


def enum_constants(node):
    out, nxt = [], 0
    for c in node.get("inner", []):
        if c["kind"] != "EnumConstantDecl":
            continue
        val = None
        for sub in c.get("inner", []):
            if "value" in sub:
                val = int(sub["value"])
        if val is None:
            val = nxt
        out.append((c["name"], val))
        nxt = val + 1
    return out


def generate():
    hs = headers()
    ast = clang_ast(hs)
    T = Types()
    consts, structs, fntypedefs, funcs = [], [], [], []
    seen = set()
    decls = list(walk_top(ast))
    # pass 1: which structs are complete (public layouts) and which are handles
    complete = set()
    for h, n in decls:
        if n["kind"] == "RecordDecl" and n.get("completeDefinition") and n.get("name", "").startswith("dpdo"):
            complete.add(n["name"])
    for h, n in decls:
        if n["kind"] == "TypedefDecl" and n["name"].startswith("dpdo"):
            q = n["type"]["qualType"]
            m = re.match(r"^struct (dpdo_\w+)$", q)
            if m:
                if m.group(1) in complete:
                    T.structs[n["name"]] = True
                else:
                    T.opaque.add(n["name"])
            elif "(*)" in q:
                T.fnptrs[n["name"]] = None
    # pass 2: everything in source order
    for h, n in decls:
        k = n["kind"]
        if k == "EnumDecl":
            for name, v in enum_constants(n):
                if name.startswith("DPDO_"):
                    consts.append((h, name, v))
        elif k == "TypedefDecl" and n["name"] in T.structs:
            rec = None
            for r_h, r in decls:
                if r["kind"] == "RecordDecl" and r.get("completeDefinition") and \
                        r.get("name") == n["type"]["qualType"].split()[-1]:
                    rec = r
            fields = [(f["name"], f["type"]["qualType"]) for f in rec.get("inner", []) if f["kind"] == "FieldDecl"]
            if any(f["kind"] == "FieldDecl" and f.get("isBitfield") for f in rec.get("inner", [])):
                raise GenError("%s has a bit field" % n["name"])
            if rec.get("tagUsed") != "struct":
                raise GenError("%s is a %s" % (n["name"], rec.get("tagUsed")))
            structs.append((h, n["name"], fields))
        elif k == "TypedefDecl" and n["name"] in T.fnptrs:
            fntypedefs.append((h, n["name"], n["type"]["qualType"]))
        elif k == "FunctionDecl" and n["name"].startswith("dpdo_") and not n["name"].startswith("dpdo__"):
            if n["name"] in seen:
                continue
            seen.add(n["name"])
            q = n["type"]["qualType"]
            ret = q[:q.index("(")].strip()
            params = [p["type"]["qualType"] for p in n.get("inner", []) if p["kind"] == "ParmVarDecl"]
            if n.get("variadic"):
                raise GenError("%s is variadic" % n["name"])
            funcs.append((h, n["name"], ret, params))
    consts += defines(hs)

    L = []
    w = L.append
    w("# SPDX-License-Identifier: BSD-3-Clause")
    w("# GENERATED by scripts/gen-python.py from include/dpdo/*.h -- do not edit; run `make python-capi`.")
    w("# `make check` (check-python-capi) fails when this file differs from what the headers give.")
    w('"""The C API of libdpdo as ctypes declarations: constants, struct layouts, callback types and')
    w('the prototype of every DPDO_API function (FUNCTIONS: name -> (restype, [argtypes]))."""')
    w("import ctypes as C")
    w("")
    w("# ---- constants (enumerators and numeric #defines) ----")
    cur = None
    names = []
    for h, name, v in consts:
        if h != cur:
            w("# %s" % h)
            cur = h
        w("%s = %r" % (name, v))
        names.append(name)
    w("")
    w("CONSTANTS = (")
    for x in names:
        w('    "%s",' % x)
    w(")")
    w("")
    w("# ---- public structs (declared first, laid out below, so that they can refer to each other) ----")
    for h, name, _ in structs:
        w("")
        w("")
        w("class %s(C.Structure):" % name)
        w('    """struct %s (include/dpdo/%s)."""' % (name, h))
        w("")
    w("")
    w("# ---- callback types ----")
    for h, name, q in fntypedefs:
        w("%s = %s  # %s" % (name, T.fnptr(q), h))
    w("")
    w("# ---- struct layouts (fields in declaration order) ----")
    for h, name, fields in structs:
        w("%s._fields_ = [" % name)
        for fname, fq in fields:
            w('    ("%s", %s),  # %s' % (fname, T.ctype(fq), fq))
        w("]")
    w("")
    w("STRUCTS = (")
    for s in structs:
        w("    %s," % s[1])
    w(")")
    w("")
    w("# ---- functions: name -> (restype, [argtypes]) ----")
    w("FUNCTIONS = {")
    cur = None
    for h, name, ret, params in funcs:
        if h != cur:
            w("    # %s" % h)
            cur = h
        w('    "%s": (%s, [%s]),' % (name, T.ctype(ret), ", ".join(T.param(p) for p in params)))
    w("}")
    return "\n".join(L) + "\n", len(funcs), len(structs), len(names)


def main(argv):
    global INCLUDE
    argv = list(argv)
    if len(argv) > 2 and argv[1] == "--include":
        INCLUDE = os.path.abspath(argv[2])
        del argv[1:3]
    try:
        out, nf, ns, nc = generate()
    except GenError as e:
        sys.stderr.write("gen-python: %s\n" % e)
        return 1
    if len(argv) > 1:
        with open(argv[1], "w") as f:
            f.write(out)
        sys.stderr.write("gen-python: %s: %d functions, %d structs, %d constants\n" % (argv[1], nf, ns, nc))
    else:
        sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
