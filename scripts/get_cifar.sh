#!/bin/sh
# get_cifar.sh: downloads CIFAR-10 (binary version) into data/cifar-10-batches-bin,
# where the programs look for it when CIFAR_DIR is not set. Run by `make data`.
#
#   1. fetch cifar-10-binary.tar.gz from the dataset's official page
#      (Krizhevsky's CIFAR page, University of Toronto), with a progress bar;
#   2. check its md5 (the archive's, not the unpacked files': a re-encoded
#      copy has other checksums, and is fine);
#   3. unpack it into data/ and check the six files have the right size.
#
# No network, or a bad download: say how to use a copy that is already on the
# machine (CIFAR_DIR), and exit 1.
#
# For testing this script offline, CIFAR_URL and CIFAR_MD5 override the
# address (curl also takes file://...) and the expected checksum.
set -eu

URL=${CIFAR_URL:-https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz}
MD5=${CIFAR_MD5:-c32a1d4ab5d03f1284b67883e8d87530}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=$ROOT/data
DEST=$DATA/cifar-10-batches-bin
ARCHIVE=$DATA/cifar-10-binary.tar.gz
FILES="data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin test_batch.bin"
FILE_BYTES=30730000   # 10,000 records of 3,073 bytes

say() { echo "get_cifar: $*"; }

# Prints how to do without a download, then fails.
give_up() {
    say "$*" >&2
    rmdir "$DATA" 2> /dev/null || true   # no empty data/ left behind
    cat >&2 <<EOF

CIFAR-10 is not in $DEST.
If a copy of the binary version (a folder cifar-10-batches-bin with
data_batch_1.bin .. data_batch_5.bin and test_batch.bin) is already on this
machine, point the programs at it instead of downloading:

    export CIFAR_DIR=/path/to/cifar-10-batches-bin

(a relative path is taken from the folder you run make in)

or put cifar-10-binary.tar.gz (from $URL)
into $DATA/ yourself and run \`make data\` again.
EOF
    exit 1
}

# 0 if directory $1 holds the six files, each of the right size.
has_cifar_files() {
    for f in $FILES; do
        [ -f "$1/$f" ] || return 1
        [ "$(wc -c < "$1/$f")" -eq "$FILE_BYTES" ] || return 1
    done
    return 0
}

if has_cifar_files "$DEST"; then
    say "CIFAR-10 is already in $DEST, nothing to do"
    exit 0
fi
if [ -n "${CIFAR_DIR:-}" ]; then
    if has_cifar_files "$CIFAR_DIR"; then
        say "CIFAR_DIR=$CIFAR_DIR already holds CIFAR-10; the programs will use it, nothing to do"
        exit 0
    fi
    say "note: CIFAR_DIR=$CIFAR_DIR does not hold the six CIFAR-10 files of the right size;" \
        "the programs will look there, not in $DEST, until you change or unset it" >&2
fi

mkdir -p "$DATA"

# An archive left by an earlier run is used if its checksum is right.
md5_of() { md5sum "$1" | cut -d' ' -f1; }
DOWNLOADED=0
if [ -f "$ARCHIVE" ] && [ "$(md5_of "$ARCHIVE")" = "$MD5" ]; then
    say "using the archive already there, $ARCHIVE"
else
    [ -f "$ARCHIVE" ] && say "$ARCHIVE has the wrong md5, downloading it again"
    say "downloading $URL (about 163 MB)"
    PART=$ARCHIVE.part
    rm -f "$PART"
    if command -v curl > /dev/null 2>&1; then
        curl --fail --location --progress-bar --connect-timeout 20 -o "$PART" "$URL" \
            || { rm -f "$PART"; give_up "download failed (no network, or the address is unreachable)"; }
    elif command -v wget > /dev/null 2>&1; then
        wget --progress=bar:force --timeout=20 --tries=2 -O "$PART" "$URL" \
            || { rm -f "$PART"; give_up "download failed (no network, or the address is unreachable)"; }
    else
        give_up "neither curl nor wget is installed"
    fi
    got=$(md5_of "$PART")
    if [ "$got" != "$MD5" ]; then
        rm -f "$PART"
        give_up "the download's md5 is $got, expected $MD5: incomplete or not the CIFAR-10 archive (removed it)"
    fi
    mv "$PART" "$ARCHIVE"
    DOWNLOADED=1
fi

say "unpacking into $DATA"
tar -xzf "$ARCHIVE" -C "$DATA" || give_up "could not unpack $ARCHIVE"
has_cifar_files "$DEST" || give_up "$ARCHIVE did not unpack into the six files of the right size"
# The archive is 163 MB we no longer need (the loader reads the .bin files);
# one the user put there themselves is left alone.
[ "$DOWNLOADED" = 1 ] && rm -f "$ARCHIVE"
say "done: CIFAR-10 is in $DEST"
