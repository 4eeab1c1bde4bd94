# SPDX-License-Identifier: BSD-3-Clause
# Throw-away Debian chroots for scripts/build-deb.sh and scripts/test-deb-install.sh, made from
# this machine's own apt sources; the host's packages are never changed (nothing is installed,
# upgraded or removed on the host: debootstrap itself is fetched with `apt-get download` and run
# from a temporary directory when the host does not have it).
#
#   deb_chroot_new DIR   extract a fresh chroot into DIR from the cached base tarball, creating the
#                        tarball first with debootstrap (--variant=minbase) if it is absent;
#   deb_chroot_run DIR CMD...   run CMD inside DIR under `unshare -m` (a private mount namespace:
#                        /proc, /dev and /sys are mounted for CMD only and vanish with it).
#
# The suite is the host's (VERSION_CODENAME of /etc/os-release), the mirror the first Debian URI
# of /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list; the chroot gets the host's
# Debian "deb" entries (main, security, updates) and nothing else.
# Cache: $DPDO_DEB_CACHE (default /var/cache/libdpdo-deb): base-<suite>-<arch>.tar (about 100 MB).
# Needs root (debootstrap, chroot, unshare).
# shellcheck shell=sh

deb_suite() { . /etc/os-release && echo "$VERSION_CODENAME"; }

# the host's Debian apt entries (one-line format), for the chroot's /etc/apt/sources.list
deb_sources() {
    {
        for f in /etc/apt/sources.list.d/*.sources; do
            [ -f "$f" ] || continue
            # deb822 stanzas: Types/URIs/Suites/Components
            awk 'BEGIN{RS=""; FS="\n"} {
                    t=u=s=c=""
                    for (i=1;i<=NF;i++) {
                        if ($i ~ /^Types:/) t=substr($i,8)
                        if ($i ~ /^URIs:/) u=substr($i,6)
                        if ($i ~ /^Suites:/) s=substr($i,8)
                        if ($i ~ /^Components:/) c=substr($i,12)
                    }
                    gsub(/^ +| +$/,"",t); gsub(/^ +| +$/,"",u); gsub(/^ +| +$/,"",s); gsub(/^ +| +$/,"",c)
                    if (t ~ /(^| )deb( |$)/ && u ~ /debian/) { n=split(s,ss," "); for (k=1;k<=n;k++) print "deb " u " " ss[k] " " c }
                 }' "$f"
        done
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -f "$f" ] && grep -E '^deb [^[]*debian' "$f"
        done
    } | sort -u
}

deb_mirror() {
    deb_sources | awk -v s="$(deb_suite)" '$3 == s {print $2; exit}'
}

deb_cache() { echo "${DPDO_DEB_CACHE:-/var/cache/libdpdo-deb}"; }

deb_base_tar() { echo "$(deb_cache)/base-$(deb_suite)-$(dpkg --print-architecture).tar"; }

# debootstrap from the host if present, else from a downloaded (not installed) .deb in $1
deb_debootstrap() {
    d=$1; shift
    if command -v debootstrap >/dev/null 2>&1; then
        debootstrap "$@"
        return
    fi
    mkdir -p "$d/dl" "$d/db"
    (cd "$d/dl" && apt-get -q -o APT::Sandbox::User=root download debootstrap >/dev/null)
    dpkg-deb -x "$d"/dl/debootstrap_*.deb "$d/db"
    DEBOOTSTRAP_DIR="$d/db/usr/share/debootstrap" sh "$d/db/usr/sbin/debootstrap" "$@"
}

deb_chroot_base() {
    tar=$(deb_base_tar)
    [ -s "$tar" ] && return 0
    mkdir -p "$(deb_cache)"
    suite=$(deb_suite); mirror=$(deb_mirror)
    [ -n "$mirror" ] || { echo "deb-chroot: no Debian mirror for $suite in the host's apt sources" >&2; return 1; }
    w=$(mktemp -d /var/tmp/dpdo-debootstrap.XXXXXX)
    echo "deb-chroot: debootstrap --variant=minbase $suite from $mirror (once; cached in $tar)" >&2
    if ! deb_debootstrap "$w" --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
        "$suite" "$w/root" "$mirror" > "$w/debootstrap.log" 2>&1; then
        tail -n 20 "$w/debootstrap.log" >&2; rm -rf "$w"; return 1
    fi
    deb_sources > "$w/root/etc/apt/sources.list"
    rm -f "$w"/root/etc/apt/sources.list.d/*
    tar -C "$w/root" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
    rm -rf "$w"
}

deb_chroot_new() {
    deb_chroot_base || return 1
    mkdir -p "$1"
    tar -C "$1" -xf "$(deb_base_tar)"
    cp /etc/resolv.conf "$1/etc/resolv.conf"
}

deb_chroot_run() {
    r=$1; shift
    unshare -m --propagation private sh -eu -c '
        r=$1; shift
        mount -t proc proc "$r/proc"
        mount --rbind /dev "$r/dev"
        mount --rbind /sys "$r/sys"
        mount -t tmpfs tmpfs "$r/tmp"
        exec chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
            PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin "$@"
    ' sh "$r" "$@"
}
