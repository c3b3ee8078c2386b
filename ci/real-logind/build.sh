#!/bin/bash
# Builds the static tree every real-logind test instance mounts (tests/reallogind/real_logind.py):
# a prepared /etc/systemd (only dbus, systemd-logind and polkitd start; every sleep and shutdown unit is
# a recorder), private passwd/group/shadow with two test users (4242 lgtest, 4243 lgother), a fake
# /sys/power and the LD_PRELOAD evdev shim for the fake lid. Nothing outside the output folder is
# written. Cached: the output folder is named by a hash of this script, inner.sh, the shim's source and
# the installed systemd/polkitd/dbus versions, so a second build is a directory lookup.
#
#   bash ci/real-logind/build.sh [CACHE_DIR]   prints the built folder (default ~/.cache/lidguard-real-logind)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${1:-${LIDGUARD_REAL_LOGIND_CACHE:-$HOME/.cache/lidguard-real-logind}}"
versions="$(dpkg-query -W -f '${Package} ${Version}\n' systemd polkitd dbus-daemon libc6 2>/dev/null || true)"
key="$( { cat "$here/build.sh" "$here/inner.sh" "$here/fakeevdev.c"; echo "$versions"; } | sha256sum | cut -c1-16)"
out="$cache/$key"
if [ -e "$out/complete" ]; then echo "$out"; exit 0; fi
mkdir -p "$cache"
work="$(mktemp -d "$cache/.build-XXXXXX")"
trap 'rm -rf "$work"' EXIT
LIB=/lib/systemd/system

# ---- /etc/systemd of the namespace (bound read-only over /etc/systemd)
E="$work/etc-systemd"
mkdir -p "$E"
for f in journald.conf logind.conf sleep.conf system.conf user.conf; do
    [ -e "/etc/systemd/$f" ] && cp "/etc/systemd/$f" "$E/"
done
mkdir -p "$E/system" "$E/system-generators" "$E/system.conf.d" "$E/logind.conf.d"
for g in /lib/systemd/system-generators/* /usr/lib/systemd/system-generators/*; do
    [ -e "$g" ] && ln -sf /dev/null "$E/system-generators/$(basename "$g")"
done
cat > "$E/system.conf.d/lidguard-test.conf" <<'X'
[Manager]
LogLevel=info
LogTarget=kmsg
ShowStatus=no
DefaultCPUAccounting=no
DefaultIOAccounting=no
DefaultBlockIOAccounting=no
DefaultMemoryAccounting=no
DefaultTasksAccounting=no
DefaultIPAccounting=no
RuntimeWatchdogSec=off
RebootWatchdogSec=off
KExecWatchdogSec=off
DefaultTimeoutStartSec=20s
DefaultTimeoutStopSec=5s
CtrlAltDelBurstAction=none
X
# HandleLidSwitch and HoldoffTimeoutSec come from the instance's own drop-in (/run/systemd/logind.conf.d).
cat > "$E/logind.conf.d/lidguard-test.conf" <<'X'
[Login]
NAutoVTs=0
ReserveVT=0
KillUserProcesses=no
InhibitDelayMaxSec=3
HandlePowerKey=ignore
HandleSuspendKey=ignore
HandleHibernateKey=ignore
IdleAction=ignore
X

U="$E/system"
mask() { for u in "$@"; do ln -sf /dev/null "$U/$u"; done; }
for d in sysinit sockets timers local-fs getty multi-user graphical basic paths slices; do
    [ -d "$LIB/$d.target.wants" ] || continue
    for u in "$LIB/$d.target.wants"/*; do
        b="$(basename "$u")"
        case "$b" in dbus.socket|dbus.service|systemd-logind.service|polkit.service) continue ;; esac
        mask "$b"
    done
done
mask systemd-tmpfiles-clean.service systemd-tmpfiles-clean.timer systemd-tmpfiles-setup.service \
     systemd-tmpfiles-setup-dev.service systemd-sysctl.service systemd-sysusers.service systemd-binfmt.service \
     proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount systemd-modules-load.service \
     kmod-static-nodes.service modprobe@.service systemd-udevd.service systemd-udev-trigger.service \
     systemd-udev-settle.service systemd-random-seed.service systemd-update-utmp.service \
     systemd-update-utmp-runlevel.service systemd-journal-flush.service systemd-journald.service \
     systemd-journald.socket systemd-journald-dev-log.socket systemd-journald-audit.socket \
     systemd-machine-id-commit.service systemd-firstboot.service systemd-repart.service \
     systemd-pcrphase.service systemd-pcrphase-sysinit.service systemd-hwdb-update.service \
     systemd-journal-catalog-update.service systemd-update-done.service ldconfig.service \
     systemd-timesyncd.service getty.target getty@.service serial-getty@.service console-getty.service \
     container-getty@.service systemd-remount-fs.service systemd-fsck-root.service systemd-pstore.service \
     systemd-boot-update.service systemd-boot-system-token.service systemd-rfkill.service systemd-rfkill.socket \
     systemd-initctl.socket systemd-initctl.service systemd-ask-password-console.path \
     systemd-ask-password-wall.path systemd-coredump.socket dev-hugepages.mount dev-mqueue.mount \
     sys-kernel-config.mount sys-kernel-debug.mount sys-kernel-tracing.mount sys-fs-fuse-connections.mount \
     systemd-quotacheck.service quotaon.service systemd-user-sessions.service user@.service \
     user-runtime-dir@.service systemd-backlight@.service systemd-hostnamed.service systemd-timedated.service \
     systemd-localed.service cron.service postgresql.service emergency.service rescue.service \
     emergency.target rescue.target

# ---- SAFETY: every sleep and shutdown service only appends a line to the instance's recorder log
for s in systemd-suspend systemd-hibernate systemd-hybrid-sleep systemd-suspend-then-hibernate \
         systemd-poweroff systemd-reboot systemd-halt systemd-kexec systemd-exit systemd-soft-reboot; do
    cat > "$U/$s.service" <<X
[Unit]
Description=lidguard test recorder for $s (records only)
DefaultDependencies=no
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo "\$\$(cut -d" " -f1 /proc/uptime) %n" >> /run/lidguard-test/sleep-requests.log'
X
done
for t in poweroff reboot halt kexec exit soft-reboot ctrl-alt-del; do
    svc="systemd-$t"; [ "$t" = ctrl-alt-del ] && svc=systemd-reboot
    cat > "$U/$t.target" <<X
[Unit]
Description=lidguard test recorder target $t (records only)
DefaultDependencies=no
Requires=$svc.service
After=$svc.service
X
done

cat > "$U/lidguard-test.target" <<'X'
[Unit]
Description=lidguard real-logind test target
Wants=dbus.socket dbus.service systemd-logind.service polkit.service lidguard-test-ready.service
X
ln -sf lidguard-test.target "$U/default.target"
cat > "$U/lidguard-test-ready.service" <<'X'
[Unit]
Description=lidguard real-logind readiness marker
After=dbus.service systemd-logind.service polkit.service
Requires=dbus.service systemd-logind.service polkit.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'cat /proc/uptime > /run/lidguard-test/ready'
X
mkdir -p "$U/systemd-logind.service.d" "$U/dbus.service.d" "$U/polkit.service.d" "$U/dbus.socket.d"
# A second listening socket for the system bus, in the instance's folder that the host also sees.
cat > "$U/dbus.socket.d/lidguard-test.conf" <<'X'
[Socket]
ListenStream=/run/lidguard-test/system_bus_socket
SocketMode=0666
X
cat > "$U/systemd-logind.service.d/lidguard-test.conf" <<'X'
[Service]
StandardOutput=append:/run/lidguard-test/logind.log
StandardError=inherit
Environment=SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console
Environment=SYSTEMD_BYPASS_HIBERNATION_MEMORY_CHECK=1
Environment=LD_PRELOAD=/run/lidguard-stage/fakeevdev.so FAKE_LID_STATE=/run/lidguard-test/lid-state
Environment=SYSTEMD_DEVICE_VERIFY_SYSFS=0
WatchdogSec=0
X
cat > "$U/dbus.service.d/lidguard-test.conf" <<'X'
[Service]
StandardOutput=append:/run/lidguard-test/dbus.log
StandardError=inherit
ExecStart=
ExecStart=/usr/bin/dbus-daemon --system --address=systemd: --nofork --nopidfile --systemd-activation --nosyslog
X
cat > "$U/polkit.service.d/lidguard-test.conf" <<'X'
[Unit]
After=systemd-logind.service
[Service]
StandardOutput=append:/run/lidguard-test/polkit.log
StandardError=inherit
ExecStart=
ExecStart=/usr/lib/polkit-1/polkitd
X

# ---- users: private passwd/group/shadow with two test users
for f in passwd group shadow gshadow; do cp "/etc/$f" "$work/$f"; done
echo 'lgtest:x:4242:4242:lidguard test user:/tmp:/bin/sh' >> "$work/passwd"
echo 'lgother:x:4243:4243:lidguard second test user:/tmp:/bin/sh' >> "$work/passwd"
echo 'lgtest:x:4242:' >> "$work/group"; echo 'lgother:x:4243:' >> "$work/group"
echo 'lgtest:!:19000:0:99999:7:::' >> "$work/shadow"; echo 'lgother:!:19000:0:99999:7:::' >> "$work/shadow"
echo 'lgtest:!::' >> "$work/gshadow"; echo 'lgother:!::' >> "$work/gshadow"

# ---- a fake /sys/power (copied onto a tmpfs over /sys/power inside the namespace)
mkdir -p "$work/sys-power"
echo 'freeze mem disk' > "$work/sys-power/state"
echo 's2idle [deep]' > "$work/sys-power/mem_sleep"
echo '[platform] shutdown reboot suspend test_resume' > "$work/sys-power/disk"
echo 0:0 > "$work/sys-power/resume"; echo 0 > "$work/sys-power/resume_offset"
echo 20000 > "$work/sys-power/pm_freeze_timeout"; echo 0 > "$work/sys-power/image_size"

# ---- the evdev shim for the fake lid, and the in-namespace PID-1 script
gcc -shared -fPIC -O2 -Wall -o "$work/fakeevdev.so" "$here/fakeevdev.c" -ldl
install -m 0755 "$here/inner.sh" "$work/inner.sh"
chmod -R a+rX "$work"
echo "$versions" > "$work/versions"
touch "$work/complete"
if ! mv -T "$work" "$out" 2>/dev/null; then  # another worker built it first
    [ -e "$out/complete" ] || { echo "build.sh: could not place $out" >&2; exit 1; }
fi
trap - EXIT
rm -rf "$work"
echo "$out"
