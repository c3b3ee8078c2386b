#!/bin/bash
# PID 1 of a real-logind test instance (tests/reallogind/real_logind.py starts it through
#   unshare --pid --fork --mount --mount-proc --propagation private --uts --ipc --net --cgroup).
# It builds a private view of the file system, then execs systemd. Every mount below is private to
# this mount namespace; the host's /run, /etc, /sys and /dev are never written.
#   inner.sh STAGE RUNDIR    STAGE: ci/real-logind/build.sh's folder; RUNDIR: this instance's host folder
set -euo pipefail
stage="$1" rundir="$2"
# libmount would create /run/mount/utab on the HOST /run before the private /run exists.
export LIBMOUNT_UTAB="$rundir/libmount-utab"
ro_bind() { mount --bind "$1" "$2"; mount -o remount,bind,ro "$2"; }

mount -t tmpfs -o mode=755,nosuid,nodev tmpfs /run
mkdir -p /run/lidguard-stage /run/lidguard-test
ro_bind "$stage" /run/lidguard-stage
mount --bind "$rundir" /run/lidguard-test
mkdir -p /run/systemd/logind.conf.d
lid_action="$(cat "$rundir/handle-lid-switch")"
printf '[Login]\nHandleLidSwitch=%s\nHandleLidSwitchExternalPower=%s\nHandleLidSwitchDocked=ignore\nHoldoffTimeoutSec=%ss\n' \
    "$lid_action" "$lid_action" "$(cat "$rundir/holdoff-seconds")" > /run/systemd/logind.conf.d/instance.conf

mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /var/tmp
mount -t tmpfs -o mode=755 tmpfs /var/lib/systemd
ro_bind "$stage/etc-systemd" /etc/systemd
for f in passwd group shadow gshadow; do ro_bind "$stage/$f" "/etc/$f"; done
mount --bind /run/lidguard-test/polkit-rules /etc/polkit-1/rules.d  # /tmp is private by now

# /sys read-only; a tmpfs /sys/power with the fake states; our own cgroup mounts (rooted at this
# instance's cgroups through the cgroup namespace); a fake evdev lid under a tmpfs /sys/class/input.
umount -R -l /sys/fs/cgroup
mount -o remount,bind,ro /sys
mount -t tmpfs -o mode=755,nosuid,nodev,noexec tmpfs /sys/power
cp "$stage"/sys-power/* /sys/power/
mount -t tmpfs -o mode=755,nosuid,nodev,noexec tmpfs /sys/fs/cgroup
mkdir /sys/fs/cgroup/unified /sys/fs/cgroup/systemd
mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup/unified
mount -t cgroup -o nosuid,nodev,noexec,none,name=systemd cgroup /sys/fs/cgroup/systemd
for c in cpu cpuacct blkio devices pids freezer memory; do
    grep -q "^$c[[:space:]].*1\$" /proc/cgroups || continue
    mkdir "/sys/fs/cgroup/$c"; mount -t cgroup -o "nosuid,nodev,noexec,$c" cgroup "/sys/fs/cgroup/$c"
done
mount -t tmpfs -o mode=755 tmpfs /sys/class/input
event=/sys/class/input/event0
mkdir -p "$event"
printf 'MAJOR=13\nMINOR=64\nDEVNAME=input/event0\n' > "$event/uevent"
echo 13:64 > "$event/dev"
ln -s ../../class/input "$event/subsystem"
mkdir -p /run/udev/data /run/udev/tags/power-switch
printf 'I:1\nE:ID_INPUT=1\nE:ID_INPUT_SWITCH=1\nE:ID_PATH=platform-lidguard-test\nG:power-switch\nQ:power-switch\nV:1\n' \
    > /run/udev/data/c13:64
: > "/run/udev/tags/power-switch/+input:event0"

mount --bind /proc/sys /proc/sys; mount -o remount,bind,ro /proc/sys
if [ -e /proc/sysrq-trigger ]; then ro_bind /proc/sysrq-trigger /proc/sysrq-trigger; fi

# A private /dev: no console, no watchdog; /dev/kmsg is a plain file (PID 1's log, copied out by the fixture).
mount -t tmpfs -o mode=755,nosuid tmpfs /dev
mknod -m 666 /dev/null c 1 3; mknod -m 666 /dev/zero c 1 5; mknod -m 666 /dev/full c 1 7
mknod -m 666 /dev/random c 1 8; mknod -m 666 /dev/urandom c 1 9; mknod -m 666 /dev/tty c 5 0
mkdir /dev/pts /dev/shm /dev/input
mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts /dev/pts
ln -s pts/ptmx /dev/ptmx
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
ln -s /proc/self/fd /dev/fd; ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout; ln -s /proc/self/fd/2 /dev/stderr
: > /dev/kmsg
mkfifo -m 600 /dev/input/event0

mount -o remount,bind,ro /
exec setpriv --bounding-set -sys_time,-sys_module,-wake_alarm -- \
    env -i container=lidguard-test PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    /lib/systemd/systemd --system
