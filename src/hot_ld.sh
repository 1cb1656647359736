#!/bin/sh
# Writes to $1 the linker script that places the functions named in $2 (one
# a line, src/hot_functions.txt) first in .text: the linker's own default
# script, as the compiler driver "$3 ..." links with it, with those input
# sections ahead of the others inside .text (one .text: debuggers and
# valgrind know the code in it). Objects need -ffunction-sections.
set -eu
out=$1
list=$2
shift 2
tmp=$out.tmp
echo 'int main(void) { return 0; }' >"$tmp.c"
"$@" -o "$tmp.bin" "$tmp.c" -Wl,--verbose 2>/dev/null |
    awk '/^==========/ { n++; next } n == 1' >"$tmp.def"
rm -f "$tmp.c" "$tmp.bin"
if ! grep -q '^ *\.text *:' "$tmp.def"; then
    echo "$0: no default linker script from $*" >&2
    exit 1
fi
awk 'NR == FNR { if ($0 ~ /^[A-Za-z_][A-Za-z0-9_.]*$/) hot = hot "    *(.text." $0 ")\n"; next }
     { print }
     /^ *\.text *:/ { text = 1 }
     text && /^ *\{/ { printf "%s", hot; text = 0 }' "$list" "$tmp.def" >"$tmp"
rm -f "$tmp.def"
mv "$tmp" "$out"
