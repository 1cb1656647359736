#!/usr/bin/env bash
# Runs integration test files on a pure cgroup v2 with the memory, pids and
# cpu controllers, for hosts that cannot give them (a hybrid or v1 host's
# v1 hierarchies hold them for every container on it): Debian 12's kernel
# under QEMU, the host's root file system shared read-only over 9p, a tmpfs
# /tmp, the root cgroup enabling memory, pids and cpu for its children.
# Emulated (TCG) unless MCPGW_VM_ACCEL=kvm: every wait of the tests is
# stretched (MCPGW_TEST_SLOW=10) and the daemon is build/mcpgw, not the
# ASan one. Needs root and a built tree (make all fixtures); installs
# qemu-system-x86 if missing and downloads the kernel and busybox packages
# (not installed) into a scratch directory.
# Usage: test/cgroup2-vm.sh [test/integration/FILE.test.mjs …]
#        (default: test/integration/sandbox_limits.test.mjs)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
((EUID == 0)) || { echo "needs root (9p export of /, switch_root)"; exit 2; }
[[ $# -gt 0 ]] || set -- test/integration/sandbox_limits.test.mjs
W=$(mktemp -d /tmp/mcpgw-vm.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 777 "$W" # apt-get download writes as _apt
command -v qemu-system-x86_64 >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-x86 >/dev/null
cd "$W"
K=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
apt-get download "$K" busybox-static >download.log 2>&1 || { cat download.log; exit 1; }
dpkg-deb -x linux-image-*.deb k
dpkg-deb -x busybox-static*.deb bb
mkdir -p ir/bin ir/proc ir/sys ir/dev ir/host ir/mods
cp bb/bin/busybox ir/bin/
MODS="virtio virtio_ring virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci 9pnet 9pnet_virtio fscache netfs 9p"
for m in $MODS; do find k/lib/modules -name "$m.ko" -exec cp {} ir/mods/ \;; done
cat >ir/init <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for r in 1 2 3; do for m in $MODS; do insmod /mods/\$m.ko 2>/dev/null; done; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 host /host || { echo "VM-RESULT: no 9p"; poweroff -f; }
mount -t proc proc /host/proc; mount -t sysfs sys /host/sys; mount -t devtmpfs dev /host/dev
mount -t devpts devpts /host/dev/pts; mount -t tmpfs shm /host/dev/shm
mount -t tmpfs tmp /host/tmp; mount -t tmpfs run /host/run
mount -t cgroup2 none /host/sys/fs/cgroup
echo "+memory +pids +cpu" >/host/sys/fs/cgroup/cgroup.subtree_control
echo "cgroup v2: \$(cat /host/sys/fs/cgroup/cgroup.controllers)"
ip link set lo up
cp /run.sh /host/tmp/run.sh
# switch_root, not chroot: bubblewrap cannot make a user namespace in a chroot.
exec switch_root /host /bin/bash /tmp/run.sh
EOF
cat >ir/run.sh <<EOF
export PATH=$ROOT/build/tools/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
cd $ROOT
MCPGW_TEST_SLOW=10 NODE_OPTIONS=--require=$ROOT/test/webcrypto.cjs MCPGW_BIN=$ROOT/build/mcpgw \
  MCPGW_TEST_FILE_TIMEOUT_MS=1200000 node --test --test-reporter=tap $* 2>&1
echo "VM-RESULT: \$?"
echo o >/proc/sysrq-trigger
EOF
chmod +x ir/init
(cd ir && find . | ../bb/bin/busybox cpio -o -H newc 2>/dev/null | gzip >../initrd.gz)
ACCEL=${MCPGW_VM_ACCEL:-tcg,thread=multi}
timeout 1800 qemu-system-x86_64 -accel "$ACCEL" -cpu max -m 3072 -smp 2 -nographic -no-reboot -nic none \
  -kernel k/boot/vmlinuz-* -initrd initrd.gz -append "console=ttyS0 rdinit=/init panic=-1 quiet" \
  -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap | tee vm.log |
  grep --line-buffered -E '^(not )?ok|^# (pass|fail|skip)|^cgroup v2|VM-RESULT' || true
rc=$(sed -n 's/^VM-RESULT: \([0-9]*\).*/\1/p' vm.log | tr -d '\r')
[[ $rc == 0 ]] || { tail -80 vm.log; exit 1; }
