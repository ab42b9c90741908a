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
local chars = {}
for i = 0, 63 do
  chars[i] = ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"):sub(i + 1, i + 1)
end
local function base64(s) -- common.base64 is too slow for a pool of 256 KB
  local out, n = {}, #s
  for i = 1, n - 2, 3 do
    local a, b, c = s:byte(i, i + 2)
    local v = a * 65536 + b * 256 + c
    out[#out + 1] = chars[math.floor(v / 262144)] .. chars[math.floor(v / 4096) % 64]
      .. chars[math.floor(v / 64) % 64] .. chars[v % 64]
  end
  local rest = n % 3
  if rest > 0 then
    local a, b = s:byte(n - rest + 1, n)
    local v = a * 65536 + (b or 0) * 256
    local tail = chars[math.floor(v / 262144)] .. chars[math.floor(v / 4096) % 64]
    out[#out + 1] = rest == 2 and (tail .. chars[math.floor(v / 64) % 64] .. "=") or (tail .. "==")
  end
  return table.concat(out)
end

local function random_bytes(n)
  local f = io.open("/dev/urandom", "rb")
  if f then
    local s = f:read(n)
    f:close()
    if s and #s == n then return s end
  end
  local b = {} -- no /dev/urandom: Lua's generator (seeded by common.lua)
  for i = 1, n do b[i] = string.char(math.random(0, 255)) end
  return table.concat(b)
end

local pool, next_index, stride, parked, verified = {}, 0, 1, 0, false
local suffix = replicas ~= "" and ("&replicas=" .. replicas) or ""
local put_headers = { ["Content-Type"] = "application/octet-stream" }
local json_headers = { ["Content-Type"] = "application/json" }
counts = {} -- status code -> responses (global: done() reads it with thread:get)
sent = 0

function init(args)
  stride = parts * threads_n
  next_index = part + parts * id
  -- wrk calls request() once on its first thread before the run, to check it: that call takes no key.
  verified = id ~= 0
  local bytes = random_bytes(pool_size * value_bytes)
  for i = 1, pool_size do
    local v = bytes:sub((i - 1) * value_bytes + 1, i * value_bytes)
    pool[i] = store == "etcd" and base64(v) or v
  end
end

local function put(index, value)
  local key = common.key_at(index)
  if store == "etcd" then
    return wrk.format("POST", "/v3/kv/put", json_headers, '{"key":"' .. base64(key) .. '","value":"' .. value .. '"}')
  end
  return wrk.format("PUT", "/v0/entity?id=" .. key .. suffix, put_headers, value)
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
  local q = {}
  for i = 1, 1000 do q[i] = string.format("%.3f", latency:percentile(i / 10) / 1000) end
  io.write("BULK_QUANTILES " .. table.concat(q, " ") .. "\n")
end
