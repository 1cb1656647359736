#!/bin/bash
# Instructions per REST call (issue 37): build/mcpgw under callgrind with the
# C echo server (warm_spares: 0), 20 calls to take the lease, then
# instrumentation on for N sequential keep-alive POST /v1/tools/echo/call
# (one curl, one connection) and 2.5 s more so that the exporter sends what
# they queued (to a collector on loopback answering 200), then dumped.
#
#   test/bench/callgrind_calls.sh BINARY traced(0|1|audit) [N=200]
#
# `audit` runs untraced with gateway.audit on (a file in the scratch
# directory): its per-call count less the `0` run's is what a line costs
# (issue 35; of it about 4,000 are SHA-256's portable rounds, which
# valgrind runs for the SHA extensions it hides).
#
# Prints the total and per-call instructions, the collector's exports and
# spans, and the daemon's trace counters. Needs valgrind, curl, node and
# build/bench/echo_server (make bench-tools).
set -e
BIN=$1; TRACED=$2; N=${3:-200}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
D=$(mktemp -d)
trap 'kill $VPID $CPID 2>/dev/null; rm -rf "$D"' EXIT
P=$((20000 + RANDOM % 20000)); CP=$((P + 1))
node -e '
let posts = 0, spans = 0;
require("http").createServer((req, res) => {
  let n = 0, tail = "";
  req.setEncoding("latin1");
  req.on("data", (d) => { const t = tail + d; n += t.split("\"spanId\"").length - 1; tail = t.slice(-9); });
  req.on("end", () => { posts++; spans += n; res.writeHead(200).end("{}"); });
}).listen(Number(process.argv[1]), "127.0.0.1");
process.on("SIGTERM", () => { console.log(JSON.stringify({ posts, spans })); process.exit(0); });
' "$CP" > "$D/collector.out" &
CPID=$!
{
  echo "version: 1"; echo "gateway:"; echo "  warm_spares: 0"
  [ "$TRACED" = 1 ] && echo "  tracing: {endpoint: 'http://127.0.0.1:$CP', sample: 1}"
  [ "$TRACED" = audit ] && echo "  audit: {path: $D/audit.jsonl}"
  echo "servers:"; echo "  echo:"; echo "    command: $HERE/build/bench/echo_server"; echo "    args: []"
} > "$D/c.yaml"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$D/cg.out" \
  "$BIN" -c "$D/c.yaml" --listen 127.0.0.1:$P --log-level warn 2> "$D/vg.err" &
VPID=$!
for _ in $(seq 1 600); do curl -sf -o /dev/null http://127.0.0.1:$P/v1/tools && break; sleep 0.2; done
BODY='{"dialog":"d1","arguments":{"text":"hello"}}'
for _ in $(seq 1 20); do
  curl -sf -o /dev/null -H 'content-type: application/json' -d "$BODY" http://127.0.0.1:$P/v1/tools/echo/call
done
sleep 1.5
callgrind_control -i on $VPID > /dev/null
URLS=$(for _ in $(seq 1 "$N"); do echo -n "http://127.0.0.1:$P/v1/tools/echo/call "; done)
curl -sf -H 'content-type: application/json' -d "$BODY" $URLS > /dev/null
sleep 2.5
callgrind_control -d $VPID > /dev/null
sleep 0.5
M=$(curl -s http://127.0.0.1:$P/metrics | grep -E '^mcpgw_trace_spans_(total|dropped_total)' | tr '\n' ' ')
kill $VPID; wait $VPID 2> /dev/null || true
kill $CPID; wait $CPID 2> /dev/null || true
TOT=$(grep -h '^totals:\|^summary:' "$D"/cg.out.* | awk '{print $2}' | sort -n | tail -1)
echo "traced=$TRACED instructions=$TOT per_call=$((TOT / N)) collector=$(cat "$D/collector.out") $M"
