#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Printed at the end of `make install`: what a program (or `import dpdo`) needs to find the
# library just installed. Usage: install-hint.sh DESTDIR LIBDIR PKGCONFIGDIR RPATH
# Silent for staged installs (DESTDIR set: a package manager places the files).
destdir=$1; libdir=$2; pcdir=$3; rpath=$4
[ -n "$destdir" ] && exit 0
case "$rpath" in 1|yes) rpath=1 ;; *) rpath= ;; esac

# the directories the dynamic loader searches without help: the trusted ones and ld.so.conf's
searched=$( { printf '/lib\n/usr/lib\n/lib64\n/usr/lib64\n'
              m=$(gcc -print-multiarch 2>/dev/null || true)
              [ -n "$m" ] && printf '/lib/%s\n/usr/lib/%s\n' "$m" "$m"
              cat /etc/ld.so.conf /etc/ld.so.conf.d/*.conf 2>/dev/null | grep '^/' ; } | sed 's|/*$||')
in_loader=
for d in $searched; do [ "$d" = "${libdir%/}" ] && in_loader=1; done
pcpath=$(pkg-config --variable pc_path pkg-config 2>/dev/null || true)
in_pc=
old_ifs=$IFS; IFS=:
for d in $pcpath ${PKG_CONFIG_PATH:-}; do [ "${d%/}" = "${pcdir%/}" ] && in_pc=1; done
IFS=$old_ifs

echo "libdpdo installed in $libdir"
if [ -n "$rpath" ]; then
    echo "  RPATH=1: dpdo.pc adds -Wl,-rpath,$libdir, so programs built with pkg-config find libdpdo.so.1 there."
elif [ -n "$in_loader" ]; then
    if ! ldconfig -p 2>/dev/null | grep -q "$libdir/libdpdo.so"; then
        echo "  $libdir is searched by the loader; refresh its cache once (as root):  ldconfig"
    fi
else
    echo "  $libdir is not searched by the dynamic loader. To run programs linked with -ldpdo either"
    echo "    export LD_LIBRARY_PATH=$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    echo "  or list it in /etc/ld.so.conf.d/libdpdo.conf and run ldconfig (as root),"
    echo "  or reinstall with 'make install RPATH=1 ...' (pkg-config then adds -Wl,-rpath)."
fi
if [ -z "$in_pc" ]; then
    echo "  pkg-config (and Python's 'import dpdo') find it with:  export PKG_CONFIG_PATH=$pcdir\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}"
fi
exit 0
