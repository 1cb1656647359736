#!/bin/sh
# Builds build/mcpgw_<version>_<arch>.deb from the tree (`make deb`,
# `make deb VERSION=<v>`): the daemon compiled with Debian's hardening flags
# in build/deb/obj, staged by `make install DESTDIR=`, then dpkg-deb. No
# debhelper: the maintainer scripts next to this file are what
# dh_installsystemd would write, plus systemd-sysusers and the purge.
set -eu
VERSION=$1
for tool in dpkg-buildflags dpkg-shlibdeps dpkg-deb dpkg-parsechangelog; do
	command -v $tool >/dev/null ||
		{ echo "mkdeb: $tool is missing (Debian package dpkg-dev; make deps installs it)" >&2; exit 1; }
done
MAINTAINER=${DEB_MAINTAINER:-mcpgw maintainers <maintainers@mcpgw.invalid>}
HERE=systemd/deb
OUT=build/deb
ROOT=$OUT/debian/mcpgw
ARCH=$(dpkg --print-architecture)
DEB=build/mcpgw_${VERSION}_${ARCH}.deb
umask 022
# Reproducible: file dates and the changelog's from the last commit.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

rm -rf "$ROOT" "$DEB"
mkdir -p "$ROOT"
# Debian's hardening (PIE, relro, bindnow, fortify, stack protector).
eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"
make --no-print-directory BUILD="$OUT/obj" DESTDIR="$ROOT" PREFIX=/usr \
	UNITDIR=/lib/systemd/system install
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$ROOT/usr/bin/mcpgw"
gzip -9n "$ROOT/usr/share/man/man8/mcpgw.8"

DOC=$ROOT/usr/share/doc/mcpgw
install -m 0644 "$HERE/copyright" "$DOC/copyright"
# A build of another version gets a changelog entry of its own, so that
# the changelog's head names the package's version.
{
	if [ "$(dpkg-parsechangelog -l "$HERE/changelog" -S Version)" != "$VERSION" ]; then
		printf 'mcpgw (%s) unstable; urgency=medium\n\n  * Built from %s.\n\n -- %s  %s\n\n' \
			"$VERSION" "$(git describe --always --dirty 2>/dev/null || echo 'the source tree')" \
			"$MAINTAINER" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
	fi
	cat "$HERE/changelog"
} | gzip -9n >"$DOC/changelog.gz"

mkdir -p "$ROOT/DEBIAN"
for f in postinst prerm postrm; do install -m 0755 "$HERE/$f" "$ROOT/DEBIAN/$f"; done
install -m 0644 "$HERE/conffiles" "$ROOT/DEBIAN/conffiles"

# Depends: the shared libraries the binary links (dpkg-shlibdeps reads
# debian/control, hence the stub), procps for ExecReload's /bin/kill and
# systemd for sysusers and the unit. What is dlopen()ed or exec'd is in
# the control file's Recommends.
mkdir -p "$OUT/debian"
printf 'Source: mcpgw\n\nPackage: mcpgw\nArchitecture: any\n' >"$OUT/debian/control"
# Its warning that the binary is not in its package's directory comes
# even so (debian/mcpgw/DEBIAN exists): that one is dropped, others show.
shlibs=$(cd "$OUT" && dpkg-shlibdeps -O -e debian/mcpgw/usr/bin/mcpgw 2>shlibdeps.log |
	sed -n 's/^shlibs:Depends=//p')
grep -v "installed in their package's directory" "$OUT/shlibdeps.log" >&2 || true
[ -n "$shlibs" ] || { echo "mkdeb: dpkg-shlibdeps found no dependency" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" -e "s|@MAINTAINER@|$MAINTAINER|" \
	-e "s|@SIZE@|$size|" -e "s|@DEPENDS@|$shlibs, procps, systemd|" \
	"$HERE/control" >"$ROOT/DEBIAN/control"
(cd "$ROOT" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z |
	xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/md5sums"
find "$ROOT" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DEB" >/dev/null
echo "$DEB"
