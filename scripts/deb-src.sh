# Sourced by scripts that build from Debian's source packages (kube-cluster.sh,
# build-sshd.sh): `ensure_deb_src PACKAGE [VERSION]` makes `apt-get source PACKAGE` work.
# When apt knows no source for it (at that version), a deb-src twin of every `deb` entry of
# the machine's lists is written beside them (deb822 `Types: deb` stanzas, and one-line
# `deb` lines), and the lists are read again. Returns non-zero when apt still knows none.

deb_src_known() {
  # Read whole first: `grep -q` leaving early would fail the pipe under pipefail.
  local known
  known="$(apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p')" || true
  if [ -n "${2:-}" ]; then
    grep -qx -- "$2" <<<"$known"
  else
    [ -n "$known" ]
  fi
}

ensure_deb_src() {
  deb_src_known "$@" && return 0
  # One writer at a time (the tests' Kubernetes and the SSH server may be built at once).
  local lock
  exec {lock}>/var/lock/bai-deb-src.lock
  flock "$lock"
  deb_src_known "$@" || write_deb_src
  exec {lock}>&-
  deb_src_known "$@"
}

write_deb_src() {
  local twin=/etc/apt/sources.list.d/bai-deb-src.sources f
  echo "adding deb-src entries ($twin)" >&2
  : >"$twin.tmp"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    case "$f" in */bai-deb-src.sources | */bai-kube-deb-src.sources) continue ;; esac
    awk 'BEGIN { RS = ""; ORS = "\n\n" }
         /(^|\n)Types:[^\n]*deb( |$|\n)/ { gsub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, ""); print }' \
      "$f" >>"$twin.tmp"
  done
  : >"$twin.list.tmp"
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] || continue
    case "$f" in */bai-deb-src.list | */bai-kube-deb-src.list) continue ;; esac
    sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >>"$twin.list.tmp"
  done
  # The twin an older bai wrote under another name (the same entries).
  rm -f /etc/apt/sources.list.d/bai-kube-deb-src.sources /etc/apt/sources.list.d/bai-kube-deb-src.list
  mv "$twin.tmp" "$twin"
  if [ -s "$twin.list.tmp" ]; then mv "$twin.list.tmp" "${twin%.sources}.list"; else rm -f "$twin.list.tmp"; fi
  apt-get -o DPkg::Lock::Timeout=600 update -qq
}
