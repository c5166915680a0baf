#!/usr/bin/env bash
# LockBench NFC reader setup: udev rules giving group plugdev access to the USB readers libnfc
# supports, and a modprobe blacklist keeping the kernel's pn533/nfc drivers off them.
# Idempotent: run it again and it only says everything is in place.
#
#   sudo ./udev/install.sh               install, reload udev, unload the kernel drivers
#   ./udev/install.sh --dry-run          say what would be done, change nothing
#   sudo ./udev/install.sh --uninstall   remove what install put there
#   ./udev/install.sh --root DIR         install under DIR (packaging, tests); no reload/unload
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root=""
dry=0
uninstall=0
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --uninstall) uninstall=1 ;;
    --root) shift; root="${1:?--root needs a directory}" ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done

rules_src="$here/60-lockbench-nfc.rules"
blacklist_src="$here/blacklist-libnfc.conf"
rules_dst="$root/etc/udev/rules.d/60-lockbench-nfc.rules"
blacklist_dst="$root/etc/modprobe.d/blacklist-libnfc.conf"
changed=0

say() { echo "install.sh: $*"; }
run() { if [ "$dry" = 1 ]; then say "would run: $*"; else "$@"; fi; }

if [ -z "$root" ] && [ "$dry" = 0 ] && [ "$(id -u)" != 0 ]; then
  echo "install.sh: needs root to write /etc: sudo $0 $*" >&2
  exit 1
fi

place() { # src dst what
  if [ -f "$2" ] && cmp -s "$1" "$2"; then
    say "$3 already installed: $2"
  else
    run mkdir -p "$(dirname "$2")"
    run install -m 0644 "$1" "$2"
    if [ "$dry" = 1 ]; then say "$3 would be installed: $2"; else say "$3 installed: $2"; fi
    changed=1
  fi
}

remove() { # dst what
  if [ -f "$1" ]; then run rm -f "$1"; say "$2 removed: $1"; changed=1; else say "$2 not installed: $1"; fi
}

if [ "$uninstall" = 1 ]; then
  remove "$rules_dst" "udev rules"
  # Debian's libnfc package ships the same blacklist file: only remove ours.
  if [ -f "$blacklist_dst" ] && cmp -s "$blacklist_src" "$blacklist_dst"; then remove "$blacklist_dst" "modprobe blacklist"; fi
else
  place "$rules_src" "$rules_dst" "udev rules (group plugdev for ACR122U, PN533, SCL3711, …)"
  if [ -f "$blacklist_dst" ] && grep -q '^blacklist pn533_usb' "$blacklist_dst" && grep -q '^blacklist pn533$' "$blacklist_dst" && grep -q '^blacklist nfc$' "$blacklist_dst"; then
    say "modprobe blacklist already in place: $blacklist_dst"
  else
    place "$blacklist_src" "$blacklist_dst" "modprobe blacklist (pn533_usb, pn533, nfc)"
  fi
fi

if [ -n "$root" ]; then
  [ "$changed" = 1 ] && say "done under $root (no udev reload, no module unload)" || say "nothing to do under $root"
  exit 0
fi

if [ "$uninstall" = 0 ]; then
  if ! getent group plugdev >/dev/null; then run groupadd --system plugdev; say "group plugdev created"; changed=1; fi
  for m in pn533_usb pn533 nfc; do
    if grep -q "^$m " /proc/modules 2>/dev/null; then
      run modprobe -r "$m" && say "kernel module $m unloaded" || say "could not unload $m (in use?): unplug the reader and run: sudo modprobe -r $m"
      changed=1
    fi
  done
fi
if [ "$changed" = 1 ] && command -v udevadm >/dev/null; then
  run udevadm control --reload-rules
  run udevadm trigger --subsystem-match=usb --action=change
  [ "$dry" = 1 ] || say "udev rules reloaded; re-plug the reader if it was already connected"
fi
user="${SUDO_USER:-$(id -un)}"
if [ "$uninstall" = 0 ] && [ "$user" != root ] && ! id -nG "$user" 2>/dev/null | tr ' ' '\n' | grep -qx plugdev; then
  say "add yourself to plugdev, then log in again: sudo usermod -aG plugdev $user"
fi
[ "$changed" = 1 ] || say "everything already in place"
say "check with: lockbench doctor"
