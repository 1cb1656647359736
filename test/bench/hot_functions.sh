#!/bin/sh
# Writes src/hot_functions.txt: the daemon's functions that run in the
# calls benchmark (both backends; REST, /mcp, /mcp 2026-07-28) and in the
# leases scenario (100 leases), as callgrind counts them. The Makefile puts
# them together at the start of the text (HOT_LIST). Run from the top of
# the tree; a few minutes (the daemon runs under valgrind).
#   sh test/bench/hot_functions.sh
set -eu
make --no-print-directory all fixtures bench-tools >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$PWD/build/mcpgw
cat >"$tmp/mcpgw" <<WRAP
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file=$tmp/cg.%p "$bin" "\$@"
WRAP
chmod +x "$tmp/mcpgw"
MCPGW_BIN=$tmp/mcpgw BENCH_ONLY=calls,leases1k BENCH_QUICK=1 BENCH_LEASES=100 \
    BENCH_TARGETS=mcpgw_rest,mcpgw_mcp,mcpgw_modern node test/bench/run.mjs >/dev/null
out=src/hot_functions.txt
{
    echo '# Functions of the daemon that run at its start and on every call, placed'
    echo '# together at the start of its text (Makefile, HOT_LIST). Made by'
    echo '# test/bench/hot_functions.sh; one name a line, sorted.'
    for f in "$tmp"/cg.*; do
        callgrind_annotate --threshold=100 --inclusive=no "$f" 2>/dev/null |
            grep -F "[$bin]" | sed -E "s/.*:([^ :]+) \[.*/\1/; s/'[0-9]+$//"
    done | grep -E '^[A-Za-z_][A-Za-z0-9_.]*$' | LC_ALL=C sort -u
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out: $(grep -vc '^#' "$out") functions"
