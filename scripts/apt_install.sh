#!/bin/sh
# apt_install.sh: make deps (hardening-deps, cluster-deps): the Debian
# packages, as root, or through sudo; otherwise it says what to run as root
# and fails, so that `make deps && make tutorial` stops.
#
#   sh scripts/apt_install.sh TARGET PACKAGE...
target=$1; shift
install="apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $*"
if [ "$(id -u)" = 0 ]; then sh -c "$install"
elif command -v sudo >/dev/null; then sudo sh -c "$install"
else echo "make $target: run this as root:  apt-get install -y $*"; exit 1; fi
