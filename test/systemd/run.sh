#!/usr/bin/env bash
# `make systemd-test`: the Debian package under a real systemd. Builds
# build/mcpgw_$VERSION_<arch>.deb and a second build ($VERSION+upgrade),
# boots a Debian 12 container (systemd 252 as PID 1, pure cgroup v2) with
# systemd-nspawn on a debootstrap tree cached in ~/.cache/mcpgw/systemd-test/
# (see below), and checks the package there through apt, systemctl,
# journalctl and curl.
# Each check prints PASS or FAIL with what it saw; the last line counts them.
#
# The host may run no systemd and mix cgroup v1 and v2: nspawn gets
# --register=no --keep-unit (no machined, no scope) and
# SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1, and commands run inside through
# nsenter into the container's PID 1. The container shares the host's
# network (apt and npm need it), so 127.0.0.1:7420 must be free.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
VERSION=${VERSION:?VERSION must be set (make systemd-test sets it)}

skip() { echo "SKIP: systemd-test: $*"; exit 0; }
((EUID == 0)) || skip "needs root (debootstrap, mounts, systemd-nspawn)"
command -v systemd-nspawn >/dev/null || skip "no systemd-nspawn (Debian package systemd-container)"
command -v debootstrap >/dev/null || skip "no debootstrap (Debian package debootstrap)"
init_root=$(stat -c %d:%i /proc/1/root/. 2>/dev/null) && [[ $init_root != "$(stat -c %d:%i /)" ]] &&
	skip "runs in a chroot, where systemd-nspawn cannot boot a container"
mountpoint -q /sys/fs/cgroup || skip "no cgroup file system mounted at /sys/fs/cgroup"
if (exec 3<>/dev/tcp/127.0.0.1/7420) 2>/dev/null; then
	echo "FAIL: 127.0.0.1:7420 is taken on this machine; the container's mcpgw needs it"
	echo "0 passed, 1 failed"
	exit 1
fi

ARCH=$(dpkg --print-architecture)
DEB1=mcpgw_${VERSION}_${ARCH}.deb
DEB2=mcpgw_${VERSION}+upgrade_${ARCH}.deb
make --no-print-directory deb VERSION="$VERSION" >/dev/null || { echo "FAIL: make deb"; exit 1; }
make --no-print-directory deb VERSION="$VERSION+upgrade" >/dev/null ||
	{ echo "FAIL: make deb VERSION=$VERSION+upgrade"; exit 1; }

DIR=$PWD/build/systemd-test
mkdir -p "$DIR"
SECONDS=0

# The cached tree lives outside build/: CI runs every time in a fresh
# clone, where a tree under build/ would be built again on each run
# (debootstrap and ~400 packages' downloads, four of the first run's seven
# minutes). It is keyed by what determines it, so a change of any of these
# builds a new one: the debootstrap (suite, variant, packages, mirror) and
# the packages whose archives it holds (the .deb's Depends and Recommends,
# the Debian sources). build/systemd-test/bookworm points at the one in use.
CACHE=${MCPGW_SYSTEMD_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpgw/systemd-test}
mkdir -p "$CACHE"
SUITE=bookworm VARIANT=minbase INCLUDE=systemd,systemd-sysv,dbus,ca-certificates,curl
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
[[ -n $mirror ]] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
mirror=${mirror:-http://deb.debian.org/debian}
sources=$(cat /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list 2>/dev/null)
# What `apt install ./mcpgw.deb` pulls, first of each alternative.
PKGS=$(dpkg-deb -f "build/$DEB1" Depends Recommends | sed 's/^[A-Za-z]*: //' | tr ',' '\n' |
	sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | grep . | sort -u | tr '\n' ' ')
key() { sha256sum | cut -c1-12; }
KEY1=$(printf '%s\n' "$SUITE" "$VARIANT" "$INCLUDE" "$mirror" | key)
KEY2=$(printf '%s\n' "$KEY1" "$PKGS" "$sources" | key)
BOOTSTRAP=$CACHE/debootstrap-$KEY1
BASE=$CACHE/$SUITE-$KEY2

# One run at a time prepares or prunes the cache (runs of other clones may
# share it); the lock is held until this run's overlay is mounted.
exec 9>"$CACHE/lock"
flock 9
in_use() { grep -q "lowerdir=$1[,:]" /proc/self/mountinfo; }

# Stamps beside the trees say each step finished (an interrupted
# debootstrap leaves a tree that looks whole).
if [[ ! -f $BOOTSTRAP.done || ! -d $BOOTSTRAP ]]; then
	rm -rf "$BOOTSTRAP" "$BOOTSTRAP.done"
	echo "# debootstrap of Debian 12 into $BOOTSTRAP (first run only; about two minutes)"
	debootstrap --variant="$VARIANT" --include="$INCLUDE" "$SUITE" "$BOOTSTRAP" "$mirror" \
		>"$DIR/debootstrap.log" 2>&1 ||
		{ echo "FAIL: debootstrap (log: $DIR/debootstrap.log)"; exit 1; }
	touch "$BOOTSTRAP.done"
fi

# The tree the container boots: the debootstrap, the host's Debian sources,
# the host's CA bundle (through which this machine may reach package
# registries over TLS: npm), and the apt lists and archives of the
# package's dependencies, so that `apt install ./mcpgw.deb` resolves them
# through apt as on any machine but downloads nothing.
if [[ ! -f $BASE.ready || ! -d $BASE ]]; then
	rm -rf "$BASE" "$BASE.ready" "$BASE.new"
	echo "# the tree for this package's dependencies: $BASE"
	cp -a "$BOOTSTRAP" "$BASE.new"
	T=$BASE.new
	if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
		cp /etc/apt/sources.list.d/debian.sources "$T/etc/apt/sources.list.d/"
		rm -f "$T/etc/apt/sources.list"
	elif [[ -f /etc/apt/sources.list ]]; then
		cp /etc/apt/sources.list "$T/etc/apt/sources.list"
	fi
	ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
	[[ -f $ca ]] && cp "$ca" "$T/usr/local/share/ca-certificates/host-ca.crt" &&
		chroot "$T" update-ca-certificates >/dev/null 2>&1
	echo mcpgw-test >"$T/etc/hostname"
	cp -L /etc/resolv.conf "$T/etc/resolv.conf"
	# shellcheck disable=SC2086 # PKGS is a list of names
	chroot "$T" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive sh -c "apt-get -q update &&
		apt-get -q -y -o APT::Sandbox::User=root install --download-only $PKGS" \
		>"$DIR/download.log" 2>&1 ||
		{ echo "FAIL: apt-get install --download-only in the tree (log: $DIR/download.log)"; exit 1; }
	mv "$T" "$BASE" && touch "$BASE.ready"
	# Trees of other keys go, unless a run has one mounted.
	for old in "$CACHE/$SUITE"-*; do
		[[ $old == "$BASE" || $old == *.ready ]] && continue
		in_use "$old" || rm -rf "$old" "$old.ready"
	done
	for old in "$CACHE"/debootstrap-*; do
		[[ $old == "$BOOTSTRAP" || $old == "$BOOTSTRAP.done" ]] && continue
		rm -rf "$old"
	done
	echo "# the tree took ${SECONDS}s"
fi
ln -sfn "$BASE" "$DIR/bookworm"

# A command inside the container, as root with a clean environment.
in_ct() {
	nsenter -t "$LEADER" -a /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive SYSTEMD_COLORS=0 SYSTEMD_PAGER= /bin/sh -c "$1"
}

# What a run killed outright left behind (an unmounted overlay).
for old in "$DIR"/run.*; do
	[[ -d $old ]] && ! mountpoint -q "$old/root" && rm -rf "$old"
done
RUN=$(mktemp -d "$DIR/run.XXXXXX")
ROOT=$RUN/root
NSPAWN=
LEADER=
leader_of() { ps -o pid= --ppid "$1" 2>/dev/null | tr -d ' ' | head -1; }
# The container's PID 1 dies by SIGKILL, which ends the container; nspawn
# then exits by itself. (Killing nspawn first would orphan the container.)
cleanup() {
	[[ -n $LEADER ]] && in_ct 'journalctl -b --no-pager' >"$DIR/journal.log" 2>&1
	[[ -z $LEADER && -n $NSPAWN ]] && LEADER=$(leader_of "$NSPAWN")
	[[ -n $LEADER ]] && kill -KILL "$LEADER" 2>/dev/null
	if [[ -n $NSPAWN ]]; then
		for _ in $(seq 50); do kill -0 "$NSPAWN" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$NSPAWN" 2>/dev/null
		wait "$NSPAWN" 2>/dev/null
	fi
	mountpoint -q "$ROOT" && { umount "$ROOT" || umount -l "$ROOT"; }
	mountpoint -q "$ROOT" || rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Each run starts from the cached tree: an overlay keeps the tree as it is.
mkdir -p "$RUN/upper" "$RUN/work" "$ROOT"
mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$RUN/upper,workdir=$RUN/work" "$ROOT" ||
	{ echo "FAIL: cannot mount an overlay on $BASE"; exit 1; }
exec 9>&-
cp "build/$DEB1" "build/$DEB2" "$ROOT/root/"
mkdir -p "$ROOT/usr/local/lib/mcpgw-test"
install -m 0644 test/systemd/setsid-server.cjs test/systemd/sandbox-server.cjs \
	test/systemd/sandbox-status.cjs "$ROOT/usr/local/lib/mcpgw-test/"
# dpkg without an fsync per file (npm brings some 400 Debian packages): the
# container's files are thrown away after the run anyway.
echo force-unsafe-io >"$ROOT/etc/dpkg/dpkg.cfg.d/mcpgw-test-unsafe-io"

SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn --quiet --register=no --keep-unit --boot \
	--console=read-only --resolv-conf=copy-host --machine=mcpgw-test -D "$ROOT" >"$RUN/console.log" 2>&1 </dev/null &
NSPAWN=$!
for _ in $(seq 100); do
	LEADER=$(leader_of "$NSPAWN")
	[[ -n $LEADER && $(readlink "/proc/$LEADER/exe" 2>/dev/null) == */systemd ]] && break
	LEADER=
	sleep 0.1
done
[[ -n $LEADER ]] || { echo "FAIL: the container did not boot: $(tail -5 "$RUN/console.log")"; exit 1; }

# Until systemd answers and has finished booting (degraded is fine: a
# container has units that cannot start).
for _ in $(seq 120); do
	state=$(in_ct 'systemctl is-system-running' 2>/dev/null)
	[[ $state == running || $state == degraded ]] && break
	sleep 0.5
done
[[ $state == running || $state == degraded ]] ||
	{ echo "FAIL: the container did not finish booting ($state): $(tail -5 "$RUN/console.log")"; exit 1; }
echo "# booted ($state) at ${SECONDS}s"

source test/systemd/checks.sh
