#!/usr/bin/env bash
# check-fresh-debian.sh -- prove that commands (by default the README's "Quick start"
# commands) work on a *fresh* Debian 12 (bookworm) machine with no build tree.
#
# Usage: scripts/check-fresh-debian.sh [--keep] [COMMAND...]
#
#   COMMAND   A shell command line, run as root with `bash -lc` from /root/meshslice
#             inside the fresh root. Each COMMAND gets its OWN freshly extracted root,
#             so no command benefits from what an earlier one installed or built; to
#             run several steps in one root, join them with && in a single COMMAND.
#             Default: the non-blank, non-comment lines inside the fenced code block(s)
#             of README.md's "## Quick start" section, read from the committed HEAD.
#   --keep    Do not delete the temporary roots afterwards (their paths are printed).
#
# What it does:
#   1. Builds once, and caches, a pristine base root: `debootstrap --variant=minbase
#      --include=git,ca-certificates bookworm` from the Debian mirror the host's apt
#      sources use (deb822 *.sources or one-line *.list), with bookworm,
#      bookworm-updates and bookworm-security in its apt sources and EMPTY apt lists
#      (like a fresh machine, commands must `apt-get update` themselves). Nothing else:
#      cmake, g++, MPI, Trilinos are what the checked commands must install.
#      Cache: /var/cache/meshslice-fresh-debian/bookworm-minbase-git.tar.gz
#      (delete it, or set MESHSLICE_FRESH_REBUILD=1, to rebuild). Later runs only
#      extract it (seconds).
#   2. Per COMMAND: extracts the base into a new directory under /var/tmp, puts a clean
#      `git clone` of the repo's committed HEAD (the repo containing this script) at
#      /root/meshslice and, if the repo has a sibling shared/ folder, a copy of it at
#      /root/shared (the repo expects ../shared). Uncommitted changes are NOT included.
#   3. Mounts /proc, /sys, /dev (bind), /dev/pts (bind), a fresh tmpfs on /dev/shm, and
#      copies /etc/resolv.conf; writes /etc/hosts and /etc/hostname with the host's
#      name (as a real machine has, so MPI's hostname lookups work).
#   4. Runs: chroot ROOT /usr/bin/env -i HOME=/root PATH=... TERM=dumb \
#              bash -lc "cd /root/meshslice && COMMAND"   (stdin from /dev/null)
#      logging to /tmp/meshslice-fresh-debian-logs/, then prints the last 40 lines,
#      the exit status and the time taken.
#   5. On exit (also on failure or Ctrl-C) kills processes left running inside the
#      root, unmounts everything, and deletes the root unless --keep.
#   Ends with `fresh-debian: N passed, M failed`; exits non-zero if any failed.
#
# Environment plumbing copied from the host (not things a fresh machine lacks):
# resolv.conf, and apt.conf.d snippets that set Acquire::Check-Valid-Until /
# Check-Date (the sandbox mirrors may serve frozen snapshots). A policy-rc.d that
# forbids starting daemons is installed, as usual for chroots.
#
# Requirements: root, debootstrap (installed with apt-get if missing), network access
# to the Debian mirror, and ~1.5 GB of disk per root (more for Trilinos builds) under
# /var/tmp. This is a developer tool; CI does not run it.
set -euo pipefail
# The whole body is one { ... } group: bash parses it completely before running it, so
# editing or checking out this file while a (long) run is going on is harmless.
{

PROG=check-fresh-debian
CACHE_DIR=/var/cache/meshslice-fresh-debian
BASE_TAR=$CACHE_DIR/bookworm-minbase-git.tar.gz
LOG_DIR=/tmp/meshslice-fresh-debian-logs
WORK_PARENT=/var/tmp
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
TAIL_LINES=40

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { log "error: $*"; exit 2; }

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

KEEP=0
CMDS=()
while (($#)); do
    case $1 in
        --keep) KEEP=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; CMDS+=("$@"); break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) CMDS+=("$1"); shift ;;
    esac
done

[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, chroot, mount)"

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(git -C "$SCRIPT_DIR/.." rev-parse --show-toplevel) || die "script is not inside a git repo"
SHARED_SRC=$(dirname "$REPO")/shared

# --------------------------------------------------------------------------- mirror
# First URI serving suite bookworm (main archive) / bookworm-security, from the host's
# apt sources (deb822 .sources files and one-line .list files).
host_sources() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f $f ]] || continue
        # one-line: deb [opts] URI SUITE COMPONENTS...
        awk '$1=="deb"{i=2; if($2 ~ /^\[/){while(i<=NF && $i !~ /\]$/)i++; i++}
             print $i, $(i+1)}' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f $f ]] || continue
        # deb822: stanzas separated by blank lines; print "URI SUITE" pairs.
        awk 'function flush(){ if(en && types ~ /(^| )deb( |$)/){
                 n=split(uris,U," "); m=split(suites,S," ");
                 for(a=1;a<=n;a++)for(b=1;b<=m;b++)print U[a], S[b]}
                 types="";uris="";suites="";en=1 }
             BEGIN{en=1}
             /^[ \t]*#/{next}
             /^[ \t]*$/{flush();next}
             tolower($1)=="types:"{$1="";types=$0}
             tolower($1)=="uris:"{$1="";uris=$0}
             tolower($1)=="suites:"{$1="";suites=$0}
             tolower($1)=="enabled:" && tolower($2)=="no"{en=0}
             END{flush()}' "$f"
    done
}
SOURCES=$(host_sources)
MIRROR=$(awk '$2=="bookworm"{print $1; exit}' <<<"$SOURCES")
SEC_MIRROR=$(awk '$2=="bookworm-security"{print $1; exit}' <<<"$SOURCES")
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SEC_MIRROR=${SEC_MIRROR:-http://deb.debian.org/debian-security}
MIRROR=${MIRROR%/}; SEC_MIRROR=${SEC_MIRROR%/}

# ------------------------------------------------------------- cleanup helpers
ROOT=""
BUILD_DIR=""

mounted_under() {  # mount points at or below $1, deepest first
    awk -v r="$1" '{ m=$5; gsub(/\\040/," ",m); if (m==r || index(m, r"/")==1) print m }' \
        /proc/self/mountinfo | sort -r
}

procs_in_root() {
    local p rr
    for p in /proc/[0-9]*; do
        rr=$(readlink "$p/root" 2>/dev/null) || continue
        [[ $rr == "$1" ]] && echo "${p#/proc/}"
    done
    return 0
}

kill_chroot_procs() {  # only processes whose root is our temp root, i.e. ones we started
    local pids try
    for try in 1 2 3 4 5; do   # repeat: a dying make/ctest may still fork children
        mapfile -t pids < <(procs_in_root "$1")
        ((${#pids[@]})) || return 0
        log "killing ${#pids[@]} process(es) left in $1: ${pids[*]}"
        kill -TERM "${pids[@]}" 2>/dev/null || true
        sleep 1
        kill -KILL "${pids[@]}" 2>/dev/null || true
        sleep "$((try > 1))"
    done
}

unmount_all_under() {
    local m
    while read -r m; do
        [[ -n $m ]] || continue
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "warning: cannot unmount $m"
    done < <(mounted_under "$1")
}

remove_tree() {  # never rm -rf through a mount (a /dev bind mount, say)
    local left
    kill_chroot_procs "$1" || true
    unmount_all_under "$1"
    left=$(mounted_under "$1")
    if [[ -n $left ]]; then
        log "warning: still mounted, NOT deleting $1:"$'\n'"$left"
        return 1
    fi
    rm -rf --one-file-system "$1"
}

teardown() {
    [[ -n $ROOT && -d $ROOT ]] || { ROOT=""; return 0; }
    local r=$ROOT
    ROOT=""
    if ((KEEP)); then
        kill_chroot_procs "$r" || true
        unmount_all_under "$r"
        log "kept root: $r"
    else
        remove_tree "$r" || true
    fi
}

# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
    teardown
    if [[ -n $BUILD_DIR && -d $BUILD_DIR ]]; then remove_tree "$BUILD_DIR" || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ----------------------------------------------------------------------- base root
build_base() {
    if ! command -v debootstrap >/dev/null; then
        log "installing debootstrap"
        apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
    fi
    local b
    b=$(mktemp -d "$CACHE_DIR/build.XXXXXX")
    BUILD_DIR=$b   # removed by cleanup() on exit, also on failure
    log "debootstrap --variant=minbase bookworm from $MIRROR (a few minutes)"
    debootstrap --variant=minbase --include=git,ca-certificates bookworm "$b/root" "$MIRROR" \
        >"$CACHE_DIR/debootstrap.log" 2>&1 \
        || { tail -n 30 "$CACHE_DIR/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE_DIR/debootstrap.log)"; }
    local r=$b/root
    rm -f "$r/etc/apt/sources.list"
    cat >"$r/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SEC_MIRROR
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    # Sandbox mirrors may be frozen snapshots whose Release files are "expired".
    local f
    for f in /etc/apt/apt.conf.d/*; do
        [[ -f $f ]] && grep -qiE 'Check-(Valid-Until|Date)' "$f" && cp "$f" "$r/etc/apt/apt.conf.d/"
    done
    printf '#!/bin/sh\n# chroot: never start daemons\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
    chmod 755 "$r/usr/sbin/policy-rc.d"
    # A fresh machine has no downloaded package lists or .debs.
    rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/archives/*.deb "$r"/var/cache/apt/*.bin
    mkdir -p "$r/var/lib/apt/lists/partial"
    rm -f "$r/etc/resolv.conf" "$r/etc/hostname"
    printf 'mirror=%s\nsecurity=%s\nbuilt=%s\n' "$MIRROR" "$SEC_MIRROR" "$(date -u +%FT%TZ)" \
        >"$r/etc/meshslice-fresh-debian-base"
    tar -C "$r" --numeric-owner -czf "$b/base.tar.gz" .
    mv "$b/base.tar.gz" "$BASE_TAR"
    log "cached base: $BASE_TAR ($(du -h "$BASE_TAR" | cut -f1))"
    remove_tree "$b"
    BUILD_DIR=""
}

mkdir -p "$CACHE_DIR" "$LOG_DIR"
exec 9>"$CACHE_DIR/.lock"
flock 9   # one base build at a time; concurrent runs wait here
if [[ ! -s $BASE_TAR || ${MESHSLICE_FRESH_REBUILD:-0} == 1 ]]; then
    t0=$SECONDS
    build_base
    log "base built in $((SECONDS - t0)) s"
fi
flock -u 9

HEAD_SHA=$(git -C "$REPO" rev-parse --verify -q 'HEAD^{commit}') \
    || die "$REPO has no commit yet: nothing to clone (this checks the committed HEAD)"

# ------------------------------------------------------------------ default commands
if ((${#CMDS[@]} == 0)); then
    readme=$(git -C "$REPO" show "$HEAD_SHA:README.md" 2>/dev/null) \
        || die "no README.md in HEAD ($HEAD_SHA) and no COMMAND given"
    # Lines inside ``` fences of the "Quick start" section that are not blank or
    # comments. Fences are tracked throughout, so a "# comment" inside a code block
    # is not mistaken for the next heading.
    mapfile -t CMDS < <(awk '/^ *```/{c=!c; next}
                             !c && /^#+ *Quick start/{q=1; next}
                             !c && q && /^#+ /{exit}
                             q && c && NF && $1 !~ /^#/' <<<"$readme")
    ((${#CMDS[@]})) || die "found no commands in README.md's 'Quick start' section"
fi

# --------------------------------------------------------------- per-command roots
setup_root() {
    ROOT=$(mktemp -d "$WORK_PARENT/meshslice-fresh-debian.XXXXXX")
    tar -C "$ROOT" --numeric-owner -xzf "$BASE_TAR"
    git clone -q --no-hardlinks "$REPO" "$ROOT/root/meshslice"
    git -C "$ROOT/root/meshslice" checkout -q --detach "$HEAD_SHA"
    if [[ -d $SHARED_SRC ]]; then
        cp -a "$SHARED_SRC" "$ROOT/root/shared"
        chmod -R u+w "$ROOT/root/shared"
    fi
    cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
    local hn
    hn=$(hostname)
    echo "$hn" >"$ROOT/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
        "$hn" >"$ROOT/etc/hosts"
    mount -t proc proc "$ROOT/proc"
    mount -t sysfs sysfs "$ROOT/sys"
    mount --bind /dev "$ROOT/dev"
    mount --bind /dev/pts "$ROOT/dev/pts"
    mount -t tmpfs -o mode=1777,nosuid,nodev shm "$ROOT/dev/shm"
}

STAMP=$(date +%Y%m%d-%H%M%S)
npass=0 nfail=0
summary=()
log "repo $REPO at ${HEAD_SHA:0:12}; ${#CMDS[@]} command(s), each in a fresh root"
for i in "${!CMDS[@]}"; do
    cmd=${CMDS[$i]}
    n=$((i + 1))
    logf=$LOG_DIR/$STAMP-$$-$n.log
    echo "==== [$n/${#CMDS[@]}] $cmd"
    t0=$SECONDS
    setup_root
    echo "     root: $ROOT   log: $logf"
    set +e
    # In the background + wait, so that a SIGTERM/SIGINT to this script runs the
    # cleanup trap at once instead of after the command finishes.
    chroot "$ROOT" /usr/bin/env -i HOME=/root PATH="$CHROOT_PATH" TERM=dumb \
        bash -lc "cd /root/meshslice && $cmd" </dev/null >"$logf" 2>&1 &
    wait $!
    rc=$?
    set -e
    dt=$((SECONDS - t0))
    echo "---- last $TAIL_LINES lines:"
    tail -n "$TAIL_LINES" "$logf"
    if ((rc == 0)); then
        npass=$((npass + 1)); verdict=PASS
    else
        nfail=$((nfail + 1)); verdict=FAIL
    fi
    echo "==== [$n/${#CMDS[@]}] $verdict: exit status $rc after ${dt}s: $cmd"
    summary+=("$verdict (rc=$rc, ${dt}s): $cmd")
    teardown
done

echo
printf '  %s\n' "${summary[@]}"
echo "fresh-debian: $npass passed, $nfail failed"
exit $((nfail > 0))
}
