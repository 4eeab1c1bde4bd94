#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the manual pages from the public headers (the one source of truth).

    gen-man.py --out DIR [--version V] [--docdir D]   write DIR/man1/*.1 and DIR/man3/*.3
    gen-man.py --list                     print the installed page paths (man1/x.1, man3/y.3)

Section 3, one page per public header: include/dpdo/<h>.h -> dpdo_<h>(3). The page is the
header's own text in order: its opening comment is the DESCRIPTION, a "---- title ----" banner
comment starts a subsection, every other comment is printed as a paragraph in front of the
declarations it precedes, and the declarations (prototypes, enums, structs, macros) are printed
verbatim with the function names in bold. Each DPDO_API function also gets a one-line page
`.so man3/dpdo_<h>.3`, so `man dpdo_algorithm_step` works. libdpdo(3) is docs/libdpdo.3.in
(hand-written overview) with @VERSION@, @EXAMPLE@ (examples/train.c, compiled and run by
`make check`) and @SEEALSO@ filled in.
Section 1: docs/<tool>.1 for every tools/<tool>.c (an installed tool without a page is an
error), with the release on the .TH line.
Every page names the documents and examples where `make install` puts them: docs/NAME as
D/NAME and examples/NAME as D/examples/NAME (D: --docdir, the Makefile's DOCDIR).
"""
import glob
import os
import re
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCDIR = "/usr/local/share/doc/libdpdo"     # the Makefile's default (PREFIX=/usr/local)
SKIP_HEADERS = {"dpdo.h", "export.h"}        # the umbrella (libdpdo(3)) and the visibility macros
API_RE = re.compile(r"DPDO_API\b[^;{]*?\b(dpdo_[a-z0-9_]+)\s*\(", re.S)


def headers():
    return sorted(h for h in glob.glob(os.path.join(TOP, "include", "dpdo", "*.h"))
                  if os.path.basename(h) not in SKIP_HEADERS)


def page_name(h):
    return "dpdo_" + os.path.basename(h)[:-2]


def tools():
    return sorted(os.path.basename(t)[:-2] for t in glob.glob(os.path.join(TOP, "tools", "*.c")))


def api_functions(text):
    return sorted(set(API_RE.findall(text)))


def esc(line):
    """roff-escape one line of plain text (backslashes, control characters at the start, non-ASCII)."""
    out = []
    for ch in line.replace("\\", "\\e"):
        if ord(ch) > 126:
            out.append("\\[u%04X]" % ord(ch))
        elif ch == "\t":
            out.append("        ")
        else:
            out.append(ch)
    s = "".join(out)
    if s.startswith(".") or s.startswith("'"):
        s = "\\&" + s
    return s


def comment_lines(c):
    """The text of a /* ... */ comment as lines without the comment markers."""
    body = c[2:-2]
    lines = body.split("\n")
    out = []
    for i, ln in enumerate(lines):
        m = re.match(r"^\s*\* ?(.*)$", ln) if i > 0 else None
        if m and not ln.strip().startswith("*/"):
            out.append(m.group(1).rstrip())
        else:
            out.append(ln[1:].rstrip() if i == 0 and ln.startswith(" ") else ln.strip() if i > 0 else ln.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def render_text(lines):
    """Comment lines as filled paragraphs; list items and indented lines keep their own line."""
    out = [".PP"]
    first = True
    base = None
    for ln in lines:
        if not ln.strip():
            out.append(".PP")
            first, base = True, None
            continue
        indent = len(ln) - len(ln.lstrip())
        if base is None:
            base = indent
        item = re.match(r"^\s*([-*+]|\d+[.)]|[a-z][.)]) ", ln) or indent > base
        if item and not first:
            out.append(".br")
        out.append(esc(ln.strip() if not item else ln[base:] if indent > base else ln.strip()))
        first = False
    return out


def render_code(code, funcs):
    out = [".PP", ".RS 4", ".nf"]
    for ln in code.split("\n"):
        e = esc(re.sub(r"\bDPDO_API\s+", "", ln))   # the visibility macro says nothing to a reader
        for f in funcs:
            e = re.sub(r"\b%s\b(?=\s*\()" % re.escape(f), "\\\\fB%s\\\\fR" % f, e)
        out.append(e if e else "")
    out += [".fi", ".RE"]
    return out


CPP_DROP = re.compile(r"^\s*(#\s*(ifndef|endif|include|pragma)\b|#\s*define\s+DPDO_[A-Z0-9_]*_H\s*$)")


def split_header(text):
    """[('doc', comment) | ('code', text)] in file order (comments inside braces or after code on
    the same line belong to the code)."""
    text = re.sub(r'#ifdef __cplusplus\s*\nextern "C" \{\s*\n#endif\s*\n', "", text)
    text = re.sub(r"#ifdef __cplusplus\s*\n\}\s*\n#endif\s*\n", "", text)
    items, code, depth, i, n = [], "", 0, 0, len(text)

    def flush():
        nonlocal code
        kept = [ln for ln in code.split("\n") if not CPP_DROP.match(ln)]
        c = "\n".join(kept).strip("\n")
        if c.strip():
            items.append(("code", "\n".join(ln.rstrip() for ln in c.split("\n"))))
        code = ""

    while i < n:
        if text.startswith("/*", i):
            j = text.index("*/", i) + 2
            c = text[i:j]
            line_start = text.rfind("\n", 0, i) + 1
            if depth > 0 or text[line_start:i].strip():
                code += c
            else:
                flush()
                items.append(("doc", c))
            i = j
        else:
            ch = text[i]
            depth += (ch == "{") - (ch == "}")
            code += ch
            i += 1
    flush()
    return items


def th(name, section, version):
    date = ""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        date = time.strftime("%Y-%m-%d", time.gmtime(int(os.environ["SOURCE_DATE_EPOCH"])))
    return '.TH %s %s "%s" "libdpdo %s" "libdpdo Manual"' % (name.upper().replace("_", "\\(ru"), section, date,
                                                               version)


def whatis(desc):
    """A short NAME line: the first sentence of the header comment, up to a colon, without
    parentheses, at most about 70 characters."""
    s = " ".join(ln.strip() for ln in desc).split(". ")[0].split(": ")[0].rstrip(".")
    s = re.sub(r"\s+\([^)]*\)", "", s)
    if len(s) > 70:
        s = s[:70].rsplit(" ", 1)[0].rstrip(",;")
    return s


def header_page(h, version):
    text = open(h, encoding="utf-8").read()
    funcs = api_functions(text)
    items = split_header(text)
    # drop the SPDX line; the first real comment is the description
    items = [it for it in items if not (it[0] == "doc" and "SPDX-License-Identifier" in it[1])]
    desc = []
    if items and items[0][0] == "doc":
        desc = comment_lines(items.pop(0)[1])
    name = page_name(h)
    summary = whatis(desc) if desc else os.path.basename(h)
    lib = "\\-ldpdo_mpi \\-ldpdo" if name == "dpdo_mpi" else "\\-ldpdo"
    pc = "dpdo\\-mpi" if name == "dpdo_mpi" else "dpdo"
    out = [".\\\" Generated by scripts/gen-man.py from include/dpdo/%s; do not edit." % os.path.basename(h),
           th(name, 3, version), ".nh", ".ad l", ".SH NAME", "%s \\- %s" % (name, esc(summary)),
           ".SH SYNOPSIS", ".nf", ".B #include <dpdo/%s>" % os.path.basename(h), ".fi", ".PP",
           "Link with \\fI%s\\fR (\\fBpkg\\-config \\-\\-cflags \\-\\-libs %s\\fR)." % (lib, pc)]
    if funcs:
        out += [".PP", "Functions:", ".nf"] + [f + "()" for f in funcs] + [".fi"]
    out += [".SH DESCRIPTION"] + render_text(desc)
    pending = None
    for kind, body in items:
        if kind == "doc":
            lines = comment_lines(body)
            banner = re.match(r"^-{2,}\s*(.*?)\s*-*$", lines[0]) if len(lines) == 1 else None
            # "==== CORE ZONE: ... ====" / "==== ADVANCED ZONE: ... ====" (docs/api-zones.md)
            zone = re.match(r"^={2,}\s*(.*?)\s*=*$", lines[0]) if len(lines) == 1 else None
            if pending:
                out += render_text(pending)
            pending = None
            if zone:
                out += [".SS %s" % esc(zone.group(1))]
            elif banner:
                out += [".SS %s" % esc(banner.group(1) or "Declarations")]
            else:
                pending = lines
        else:
            if pending:
                out += render_text(pending)
                pending = None
            out += render_code(body, funcs)
    if pending:
        out += render_text(pending)
    out += [".SH SEE ALSO", "\\fBlibdpdo\\fR(3)"]
    return name, "\n".join(out) + "\n", funcs


def example_text():
    src = open(os.path.join(TOP, "examples", "train.c"), encoding="utf-8").read().split("\n")
    src = [ln for ln in src if "SPDX-License-Identifier" not in ln]
    return "\n".join(esc(ln) for ln in src).strip("\n")


def installed_paths(text, docdir):
    """text with the source tree's docs/NAME and examples/NAME as the installed DOCDIR/NAME and
    DOCDIR/examples/NAME (make install puts them there), outside roff comments."""
    out = []
    for ln in text.split("\n"):
        if not ln.startswith('.\\"'):
            ln = re.sub(r"(?<![\w/.-])docs/", docdir + "/", ln)
            ln = re.sub(r"(?<![\w/.-])examples/", docdir + "/examples/", ln)
        out.append(ln)
    return "\n".join(out)


def fill_template(path, subst, docdir):
    """The template at path with each placeholder of subst replaced, outside roff comments only.

    A comment line (.\\" ...) that names a placeholder is kept as it is: substituting a multi-line
    value there would end the comment after its first line and put the rest before .TH."""
    out = []
    for ln in installed_paths(open(path, encoding="utf-8").read(), docdir).split("\n"):
        if not ln.startswith('.\\"'):
            for k, v in subst.items():
                ln = ln.replace(k, v)
        out.append(ln)
    return "\n".join(out)


def tool_page(tool, version):
    p = os.path.join(TOP, "docs", tool + ".1")
    if not os.path.exists(p):
        sys.exit("gen-man: tools/%s.c is installed but docs/%s.1 does not exist" % (tool, tool))
    out = []
    for ln in open(p, encoding="utf-8").read().split("\n"):
        m = re.match(r'^\.TH\s+(\S+)\s+(\S+)\s+"[^"]*"\s+"[^"]*"(.*)$', ln)
        if m:
            ln = '.TH %s %s "" "libdpdo %s"%s' % (m.group(1), m.group(2), version, m.group(3))
        out.append(ln)
    return "\n".join(out)


def pages(version, docdir=DOCDIR):
    """{relative path: text}"""
    res = {}
    names, links = [], {}
    for h in headers():
        name, text, funcs = header_page(h, version)
        res["man3/%s.3" % name] = installed_paths(text, docdir)
        names.append(name)
        for f in funcs:
            if f != name:
                links[f] = name
    for f, name in sorted(links.items()):
        res["man3/%s.3" % f] = ".so man3/%s.3\n" % name
    seealso = ",\n".join("\\fB%s\\fR(3)" % n for n in names) + ",\n" + ",\n".join(
        "\\fB%s\\fR(1)" % esc(t) for t in tools())
    res["man3/libdpdo.3"] = fill_template(os.path.join(TOP, "docs", "libdpdo.3.in"),
                                          {"@VERSION@": version, "@SEEALSO@": seealso,
                                           "@EXAMPLE@": example_text()}, docdir)
    for t in tools():
        res["man1/%s.1" % t] = installed_paths(tool_page(t, version), docdir)
    return res


def main():
    args = sys.argv[1:]
    version = "0"
    out = None
    listing = False
    docdir = DOCDIR
    while args:
        a = args.pop(0)
        if a == "--out":
            out = args.pop(0)
        elif a == "--version":
            version = args.pop(0)
        elif a == "--docdir":
            docdir = args.pop(0)
        elif a == "--list":
            listing = True
        else:
            sys.exit(__doc__)
    if listing:
        for p in sorted(pages(version, docdir)):
            print(p)
        return
    if not out:
        sys.exit(__doc__)
    res = pages(version, docdir)
    for sub in ("man1", "man3"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
        for old in glob.glob(os.path.join(out, sub, "*")):   # pages of removed headers/functions
            if os.path.relpath(old, out) not in res:
                os.remove(old)
    for rel, text in res.items():
        path = os.path.join(out, rel)
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)


if __name__ == "__main__":
    main()
