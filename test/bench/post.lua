-- wrk script: POST a JSON body (BENCH_BODY), and print one JSON line at the
-- end with requests, errors, rps, p50/p99 in microseconds.
-- usage: BENCH_BODY='{"x":1}' wrk -s post.lua -t1 -c16 -d3s http://127.0.0.1:P/path
wrk.method = os.getenv("BENCH_METHOD") or "POST"
wrk.body = os.getenv("BENCH_BODY")
if wrk.method == "GET" then wrk.body = nil end
wrk.headers["Content-Type"] = "application/json"
-- BENCH_HEADER: one "Name: value" header, or several separated by newlines.
local extra = os.getenv("BENCH_HEADER")
if extra then
  for line in extra:gmatch("[^\n]+") do
    local k, v = line:match("^([^:]+):%s*(.*)$")
    if k then wrk.headers[k] = v end
  end
end

bad = 0
response = function(status, headers, body)
  local want = tonumber(os.getenv("BENCH_STATUS") or "200")
  if status ~= want or (body and body:find('"error"', 1, true)) then bad = bad + 1 end
end
-- response() runs in each thread's own Lua state; collect the counters per thread.
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function() end
done = function(summary, latency, requests)
  local badsum = 0
  for _, t in ipairs(threads) do badsum = badsum + (t:get("bad") or 0) end
  local errs = summary.errors
  local n = summary.requests
  io.write(string.format(
    '{"mode":"wrk","calls":%d,"errors":%d,"seconds":%.3f,"rps":%.1f,"p50_us":%.1f,"p99_us":%.1f,"mean_us":%.1f,"total_sent":%d,"socket_errors":%d}\n',
    n, badsum + errs.status, summary.duration / 1e6, n / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency.mean, n,
    errs.connect + errs.read + errs.write + errs.timeout))
end
