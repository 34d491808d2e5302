#!/bin/sh
# Installs the system tools hloviz's commands and tests need, when they are missing:
#   dot       Graphviz, which draws the pictures (Debian/Ubuntu package: graphviz)
#   chromium  a headless browser, used only by the test that opens the HTML report
# Uses apt-get when it is available and we are root (or sudo works without a password);
# otherwise says what to install and exits 2.
set -u
need_dot=0; need_chromium=0
for tool in "$@"; do
  case "$tool" in
    dot) command -v dot >/dev/null 2>&1 || need_dot=1 ;;
    chromium) { command -v chromium || command -v chromium-browser || command -v google-chrome; } >/dev/null 2>&1 || need_chromium=1 ;;
  esac
done
pkgs=""
[ "$need_dot" = 1 ] && pkgs="$pkgs graphviz"
[ "$need_chromium" = 1 ] && pkgs="$pkgs chromium"
[ -z "$pkgs" ] && exit 0

if command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO="none"; fi
  if [ "$SUDO" != none ]; then
    echo "installing:$pkgs (apt-get)"
    $SUDO apt-get update -qq >/dev/null && \
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $pkgs >/dev/null && exit 0
    echo "error: apt-get could not install:$pkgs" >&2
    exit 2
  fi
fi
echo "error: missing:$pkgs. Install them, e.g.:" >&2
echo "  Debian/Ubuntu: sudo apt-get install$pkgs" >&2
echo "  macOS:         brew install graphviz   (and Chromium or Chrome for the browser test)" >&2
echo "  conda:         conda install graphviz" >&2
exit 2
