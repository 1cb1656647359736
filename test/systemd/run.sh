#!/usr/bin/env bash
# `make systemd-test`: the Debian package under a real systemd. Builds
# build/mcpgw_$VERSION_<arch>.deb and a second build ($VERSION+upgrade),
# boots a Debian 12 container (systemd 252 as PID 1, pure cgroup v2) with
# systemd-nspawn on a debootstrap tree cached in build/systemd-test/, and
# checks the package there through apt, systemctl, journalctl and curl.
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
BASE=$DIR/bookworm
ARCHIVES=$DIR/archives
mkdir -p "$DIR" "$ARCHIVES/partial"
SECONDS=0

# The cached tree: debootstrap (minbase plus what boots and what the checks
# use), the host's Debian sources, and the host's CA bundle, through which
# this machine may reach package registries over TLS (npm).
# Stamps beside the trees say each step finished (an interrupted
# debootstrap leaves a tree that looks whole).
if [[ ! -f $BASE.ready || ! -d $BASE ]]; then
	mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null)
	[[ -n $mirror ]] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	rm -rf "$BASE" "$BASE.ready"
	if [[ ! -f $BASE.debootstrap.done || ! -d $BASE.debootstrap ]]; then
		rm -rf "$BASE.debootstrap" "$BASE.debootstrap.done"
		echo "# debootstrap of Debian 12 into $BASE (first run only; a few minutes)"
		debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,ca-certificates,curl \
			bookworm "$BASE.debootstrap" "${mirror:-http://deb.debian.org/debian}" \
			>"$DIR/debootstrap.log" 2>&1 ||
			{ echo "FAIL: debootstrap (log: $DIR/debootstrap.log)"; exit 1; }
		touch "$BASE.debootstrap.done"
	fi
	if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
		cp /etc/apt/sources.list.d/debian.sources "$BASE.debootstrap/etc/apt/sources.list.d/"
		rm -f "$BASE.debootstrap/etc/apt/sources.list"
	elif [[ -f /etc/apt/sources.list ]]; then
		cp /etc/apt/sources.list "$BASE.debootstrap/etc/apt/sources.list"
	fi
	ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
	[[ -f $ca ]] && cp "$ca" "$BASE.debootstrap/usr/local/share/ca-certificates/host-ca.crt" &&
		chroot "$BASE.debootstrap" update-ca-certificates >/dev/null 2>&1
	echo mcpgw-test >"$BASE.debootstrap/etc/hostname"
	mv "$BASE.debootstrap" "$BASE" && rm -f "$BASE.debootstrap.done" && touch "$BASE.ready"
	echo "# the tree took ${SECONDS}s"
fi

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
cp "build/$DEB1" "build/$DEB2" "$ROOT/root/"
mkdir -p "$ROOT/usr/local/lib/mcpgw-test"
install -m 0644 test/systemd/setsid-server.cjs "$ROOT/usr/local/lib/mcpgw-test/"
# dpkg without an fsync per file (npm brings some 400 Debian packages): the
# container's files are thrown away after the run anyway.
echo force-unsafe-io >"$ROOT/etc/dpkg/dpkg.cfg.d/mcpgw-test-unsafe-io"

SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn --quiet --register=no --keep-unit --boot \
	--console=read-only --resolv-conf=copy-host --machine=mcpgw-test -D "$ROOT" \
	--bind="$ARCHIVES:/var/cache/apt/archives" >"$RUN/console.log" 2>&1 </dev/null &
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
