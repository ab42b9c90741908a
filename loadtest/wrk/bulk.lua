-- wrk script: a bulk load, every key of a share written exactly once (loadtest/bulk-load.sh runs
-- three of these, one per node, PART=0, 1, 2 of PARTS=3).
--   KEYS=30000 PART=0 PARTS=3 STORE=ringkv REPLICAS=2/3 wrk -t1 -c16 -d1h -s loadtest/wrk/bulk.lua http://127.0.0.1:19080
-- Keys are k0000000000 ... (common.key_at, as loadtest/lib.js names them): the process takes the
-- indexes PART, PART+PARTS, ... below KEYS, and its thread t of WRK_THREADS the ones at offset t and
-- stride WRK_THREADS among them, so that no two connections anywhere write the same key. Values:
-- VALUE_BYTES random bytes from /dev/urandom, a pool of POOL (256) per thread taken in turn, so
-- that storage cannot compress them. STORE=ringkv: PUT /v0/entity?id=<key>&replicas=REPLICAS;
-- STORE=etcd: POST /v3/kv/put {"key": base64, "value": base64} (etcd's JSON gateway).
-- A connection whose thread has no key left sends nothing; once all WRK_CONNECTIONS / WRK_THREADS
-- of them are idle, the thread stops and touches DONE_FILE.<thread> (wrk itself only ends after -d
-- or SIGINT: bulk-load.sh interrupts it then). At the end one line on stdout:
--   BULK_SUMMARY part=0 keys=10000 sent=10000 responses=10000 connect=0 read=0 write=0 timeout=0 status=201:9998,504:2
-- and BULK_QUANTILES: the latency (ms) at every 0.1 % from 0.1 to 100 %, for merging processes.
local common = dofile((os.getenv("WRK_DIR") or "loadtest/wrk") .. "/common.lua")

local keys = tonumber(os.getenv("KEYS") or "1000000")
local part = tonumber(os.getenv("PART") or "0")
local parts = tonumber(os.getenv("PARTS") or "1")
local value_bytes = tonumber(os.getenv("VALUE_BYTES") or "1000")
local pool_size = tonumber(os.getenv("POOL") or "256")
local store = os.getenv("STORE") or "ringkv"
local replicas = os.getenv("REPLICAS") or ""
local done_file = os.getenv("DONE_FILE") or ""
local threads_n = tonumber(os.getenv("WRK_THREADS") or "1")
local connections = math.floor(tonumber(os.getenv("WRK_CONNECTIONS") or "16") / threads_n)

-- ---- main Lua state: the threads, for done() ----
local threads = {}
function setup(thread)
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

-- ---- each thread's Lua state ----
local pool, next_index, stride, parked, verified = {}, 0, 1, 0, false
local requests = common.requests(store, replicas)
counts = {} -- status code -> responses (global: done() reads it with thread:get)
sent = 0

function init(args)
  stride = parts * threads_n
  next_index = part + parts * id
  -- wrk calls request() once on its first thread before the run, to check it: that call takes no key.
  verified = id ~= 0
  pool = common.value_pool(pool_size, value_bytes, store == "etcd")
end

local function put(index, value)
  return requests.put(common.key_at(index), value)
end

function request()
  if not verified then
    verified = true
    return put(next_index, pool[1])
  end
  if next_index >= keys then
    parked = parked + 1
    if parked == connections then
      if done_file ~= "" then
        local f = io.open(done_file .. "." .. id, "w")
        if f then f:close() end
      end
      wrk.thread:stop()
    end
    return "" -- nothing to send: the connection stays idle
  end
  local index = next_index
  next_index = index + stride
  sent = sent + 1
  return put(index, pool[sent % pool_size + 1])
end

function response(status)
  counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency)
  local total, codes, responses, share = {}, {}, 0, 0
  local n_sent = 0
  for _, t in ipairs(threads) do
    n_sent = n_sent + (t:get("sent") or 0)
    for code, n in pairs(t:get("counts") or {}) do total[code] = (total[code] or 0) + n end
  end
  for code, n in pairs(total) do
    codes[#codes + 1] = string.format("%d:%d", code, n)
    responses = responses + n
  end
  table.sort(codes)
  if keys > part then share = math.floor((keys - part - 1) / parts) + 1 end
  local e = summary.errors
  io.write(string.format(
    "BULK_SUMMARY part=%d keys=%d sent=%d responses=%d connect=%d read=%d write=%d timeout=%d status=%s\n",
    part, share, n_sent, responses, e.connect, e.read, e.write, e.timeout, table.concat(codes, ",")))
  common.write_quantiles("BULK_QUANTILES", latency)
end
