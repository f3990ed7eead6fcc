-- wrk script for tools/bench: API key and method from the environment, one machine-readable
-- result line at the end (latencies in microseconds): req/s p50 p99 non-2xx socket-errors max.
wrk.headers["x-api-key"] = os.getenv("BENCH_KEY")
if os.getenv("BENCH_METHOD") == "POST" then
  wrk.method = "POST"
  wrk.headers["content-type"] = "application/json"
  wrk.body = '{"name":"bench"}'
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %.1f %d %d %d %d %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout, latency.max))
end
