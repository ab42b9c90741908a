-- wrk script: one of YCSB's core workloads on keys loaded by bulk.lua, closed loop (each connection
-- sends its next operation when the last one answered), as loadtest/ycsb.sh runs it: three wrk
-- processes, one per node, PART=0, 1, 2 of PARTS=3.
--   WORKLOAD=b KEYS=1000000 STORE=ringkv REPLICAS=2/3 wrk -t1 -c16 -d60s -s loadtest/wrk/ycsb.lua http://127.0.0.1:19080
-- The workloads (YCSB's definitions; the key chosen by DISTRIBUTION, zipfian with YCSB's constant
-- ZIPF_THETA 0.99 by default, or uniform, over the KEYS loaded keys):
--   a  50 % read, 50 % update          b  95 % read, 5 % update          c  100 % read
--   e  95 % scan of a uniformly chosen 1..SCAN_MAX (100) records from the chosen key, 5 % insert
--      of a new key: this process's indexes KEYS + PART, KEYS + PART + PARTS, ... (never chosen
--      for reads or scan starts, as YCSB's inserts are not either until they are acknowledged)
-- THINK_MS (0) paces it: each connection waits that long after an answer before its next request,
-- so a workload can run below its saturation rate (loadtest/rebuild.sh runs B at about half of it).
-- Reads are GETs of one key, updates and inserts PUTs of VALUE_BYTES (1000) random bytes (a pool
-- of 256 taken in turn), scans GET /v0/entities (etcd: a range with a limit). At the end one line
--   YCSB_SUMMARY part=0 requests=180000 read=171000 update=9000 scan=0 insert=0 connect=0 read_errors=0 write=0 timeout=0 status=0
-- (status: answers not 2xx or 3xx, which a loaded store never gives) and YCSB_QUANTILES, the
-- latency of every operation at every 0.1 % (wrk keeps one histogram, not one per operation).
local common = dofile((os.getenv("WRK_DIR") or "loadtest/wrk") .. "/common.lua")

local MIXES = { -- share of each operation, in the order they are drawn
  a = { { "read", 0.5 }, { "update", 0.5 } },
  b = { { "read", 0.95 }, { "update", 0.05 } },
  c = { { "read", 1 } },
  e = { { "scan", 0.95 }, { "insert", 0.05 } },
}
local workload = os.getenv("WORKLOAD") or "a"
local mix = assert(MIXES[workload], "WORKLOAD must be a, b, c or e, not " .. workload)
local keys = tonumber(os.getenv("KEYS") or "1000000")
local part = tonumber(os.getenv("PART") or "0")
local parts = tonumber(os.getenv("PARTS") or "1")
local scan_max = tonumber(os.getenv("SCAN_MAX") or "100")
local store = os.getenv("STORE") or "ringkv"
local requests = common.requests(store, os.getenv("REPLICAS"))
local choose = common.chooser(keys, os.getenv("DISTRIBUTION") or "zipfian", tonumber(os.getenv("ZIPF_THETA") or "0.99"))
local think_ms = tonumber(os.getenv("THINK_MS") or "0")
local pool = common.value_pool(tonumber(os.getenv("POOL") or "256"),
  tonumber(os.getenv("VALUE_BYTES") or "1000"), store == "etcd")

-- ---- main Lua state: the threads, for done() ----
local threads = {}
function setup(thread)
  threads[#threads + 1] = thread
end

-- ---- each thread's Lua state (one thread per process) ----
ops = { read = 0, update = 0, scan = 0, insert = 0 } -- global: done() reads it with thread:get
local inserted, written = 0, 0

local function next_value()
  written = written + 1
  return pool[written % #pool + 1]
end

local OPERATIONS = {
  read = function() return requests.get(common.key_at(choose())) end,
  update = function() return requests.put(common.key_at(choose()), next_value()) end,
  scan = function()
    local first, length = choose(), math.random(1, scan_max)
    return requests.scan(common.key_at(first), common.key_at(first + length), length)
  end,
  insert = function()
    local index = keys + part + parts * inserted
    inserted = inserted + 1
    return requests.put(common.key_at(index), next_value())
  end,
}

function request()
  local u, op = math.random(), mix[#mix][1]
  for _, entry in ipairs(mix) do
    if u < entry[2] then
      op = entry[1]
      break
    end
    u = u - entry[2]
  end
  ops[op] = ops[op] + 1
  return OPERATIONS[op]()
end

if think_ms > 0 then
  function delay() return think_ms end
end

function done(summary, latency)
  local total = { read = 0, update = 0, scan = 0, insert = 0 }
  for _, t in ipairs(threads) do
    for op, n in pairs(t:get("ops") or {}) do total[op] = total[op] + n end
  end
  local e = summary.errors
  io.write(string.format(
    "YCSB_SUMMARY part=%d requests=%d read=%d update=%d scan=%d insert=%d connect=%d read_errors=%d write=%d timeout=%d status=%d\n",
    part, summary.requests, total.read, total.update, total.scan, total.insert, e.connect, e.read, e.write,
    e.timeout, e.status))
  common.write_quantiles("YCSB_QUANTILES", latency)
end
