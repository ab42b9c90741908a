-- What the wrk scripts (mixed.lua, bulk.lua, ycsb.lua) share: the key space, the value, the read/write mix
-- (from the environment, as loadtest/lib.js takes them) and the summary line.
local M = {}

local keyspace = tonumber(os.getenv("KEYSPACE") or "5000")
local value_size = tonumber(os.getenv("VALUE_SIZE") or "1024")
local read_ratio = tonumber(os.getenv("READ_RATIO") or "0.5")

-- Each wrk thread runs this in a Lua state of its own, and run.sh starts three wrk processes in
-- the same instant: seed each from /dev/urandom, so that they do not walk the same keys.
local function seed()
  local s = os.time() + math.floor(os.clock() * 1e6)
  local f = io.open("/dev/urandom", "rb")
  if f then
    local bytes = f:read(4)
    f:close()
    if bytes and #bytes == 4 then
      s = s + ((bytes:byte(1) * 256 + bytes:byte(2)) * 256 + bytes:byte(3)) * 256 + bytes:byte(4)
    end
  end
  return s % 2147483647
end
math.randomseed(seed())

function M.index()
  return math.random(0, keyspace - 1)
end

-- YCSB's request distributions over the indexes [0, n). "zipfian": the sampler of Gray et al.,
-- "Quickly generating billion-record synthetic databases" (as YCSB and loadtest/lib.js), with
-- zeta(n) summed exactly for the first 1000 terms and by Euler-Maclaurin beyond; then, as YCSB's
-- ScrambledZipfianGenerator, the rank is scattered over the key space (rank * a large prime mod n,
-- a bijection because the prime is larger than n), so that the hot keys are not neighbours in the
-- key order and do not share a storage block. "uniform": every index alike.
local SCRAMBLE = 433494437 -- prime; rank * SCRAMBLE stays below 2^53 for n up to 2e7
local function zeta(n, theta)
  local m, sum = math.min(n, 1000), 0
  for i = 1, m do sum = sum + i ^ -theta end
  if n > m then
    sum = sum + (n ^ (1 - theta) - m ^ (1 - theta)) / (1 - theta)
      + (n ^ -theta - m ^ -theta) / 2 - (theta / 12) * (n ^ (-theta - 1) - m ^ (-theta - 1))
  end
  return sum
end

function M.chooser(n, distribution, theta)
  if distribution == "uniform" then
    return function() return math.random(0, n - 1) end
  end
  assert(distribution == "zipfian", "DISTRIBUTION must be zipfian or uniform, not " .. tostring(distribution))
  assert(n < 2e7, "the zipfian chooser's scramble needs fewer than 20,000,000 keys")
  if n < 2 then return function() return 0 end end
  local zetan, half = zeta(n, theta), 0.5 ^ theta
  local alpha = 1 / (1 - theta)
  local eta = (1 - (2 / n) ^ (1 - theta)) / (1 - (1 + half) / zetan)
  return function()
    local u = math.random()
    local uz, rank = u * zetan, 0
    if uz >= 1 + half then
      rank = math.min(n - 1, math.floor(n * (eta * u - eta + 1) ^ alpha))
    elseif uz >= 1 then
      rank = 1
    end
    return (rank * SCRAMBLE) % n
  end
end

function M.key_at(index)
  return string.format("k%010d", index)
end

function M.key()
  return M.key_at(M.index())
end

function M.is_read()
  return math.random() < read_ratio
end

function M.value()
  local bytes = {}
  for i = 1, value_size do
    bytes[i] = string.char(math.random(0, 255))
  end
  return table.concat(bytes)
end

-- Base64 of a string, three bytes at a time: fast enough for a pool of 256 KB of values.
local chars = {}
for i = 0, 63 do
  chars[i] = ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"):sub(i + 1, i + 1)
end
function M.base64(s)
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

-- n random bytes from /dev/urandom (else Lua's generator), so that storage cannot compress them.
function M.random_bytes(n)
  local f = io.open("/dev/urandom", "rb")
  if f then
    local s = f:read(n)
    f:close()
    if s and #s == n then return s end
  end
  local b = {}
  for i = 1, n do b[i] = string.char(math.random(0, 255)) end
  return table.concat(b)
end

-- A pool of count values of size bytes each (base64 for etcd's JSON), taken in turn by writes.
function M.value_pool(count, size, encode)
  local bytes, pool = M.random_bytes(count * size), {}
  for i = 1, count do
    local v = bytes:sub((i - 1) * size + 1, i * size)
    pool[i] = encode and M.base64(v) or v
  end
  return pool
end

-- Requests to either store, as loadtest/lib.js sends them. ringkv: PUT or GET /v0/entity?id=<key>
-- (with &replicas=<replicas> unless empty; Authorization from RINGKV_TOKEN when set) and GET
-- /v0/entities?start=&end=; etcd (3.4's JSON gateway): POST /v3/kv/put, /v3/kv/range with base64
-- keys, values already base64 (value_pool's encode), and ETCD_TOKEN when set.
function M.requests(store, replicas)
  local r = {}
  if store == "etcd" then
    local headers, key64 = { ["Content-Type"] = "application/json" }, M.base64
    -- ETCD_TOKEN: an etcd with auth on (run.sh's etcd-secure) takes its token bare in Authorization.
    if (os.getenv("ETCD_TOKEN") or "") ~= "" then headers["Authorization"] = os.getenv("ETCD_TOKEN") end
    function r.put(key, value)
      return wrk.format("POST", "/v3/kv/put", headers, '{"key":"' .. key64(key) .. '","value":"' .. value .. '"}')
    end
    function r.get(key)
      return wrk.format("POST", "/v3/kv/range", headers, '{"key":"' .. key64(key) .. '"}')
    end
    function r.scan(first, past, limit) -- [first, past), at most limit records
      return wrk.format("POST", "/v3/kv/range", headers, '{"key":"' .. key64(first) .. '","range_end":"'
        .. key64(past) .. '","limit":' .. limit .. '}')
    end
    return r
  end
  local suffix = (replicas or "") ~= "" and ("&replicas=" .. replicas) or ""
  -- TTL (loadtest/expiry.sh): every PUT's value expires after it.
  local put_suffix = suffix .. ((os.getenv("TTL") or "") ~= "" and ("&ttl=" .. os.getenv("TTL")) or "")
  local headers, put_headers = {}, { ["Content-Type"] = "application/octet-stream" }
  local token = os.getenv("RINGKV_TOKEN") or ""
  if token ~= "" then
    headers["Authorization"] = "Bearer " .. token
    put_headers["Authorization"] = headers["Authorization"]
  end
  function r.put(key, value)
    return wrk.format("PUT", "/v0/entity?id=" .. key .. put_suffix, put_headers, value)
  end
  function r.get(key)
    return wrk.format("GET", "/v0/entity?id=" .. key .. suffix, headers)
  end
  function r.scan(first, past) -- every record in [first, past)
    return wrk.format("GET", "/v0/entities?start=" .. first .. "&end=" .. past, headers)
  end
  return r
end

-- The latency at every 0.1 % from 0.1 to 100 % (ms), one line, so that the distributions of
-- several wrk processes can be merged (weighted by their requests) into one. 100 % is the
-- maximum: wrk's percentile(100) answers 0.
function M.write_quantiles(prefix, latency)
  local q = {}
  for i = 1, 999 do q[i] = string.format("%.3f", latency:percentile(i / 10) / 1000) end
  q[1000] = string.format("%.3f", latency.max / 1000)
  io.write(prefix .. " " .. table.concat(q, " ") .. "\n")
end

-- One JSON line: completed requests, their rate, errors (connect, read, write, timeout, and answers
-- that were not 2xx or 3xx) and latency percentiles in milliseconds.
function M.done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  local p = {}
  for _, q in ipairs({ 50, 90, 99, 99.9 }) do
    p[#p + 1] = string.format('"p%s": %.3f', tostring(q), latency:percentile(q) / 1000)
  end
  io.write(string.format(
    'WRK_SUMMARY {"requests": %d, "seconds": %.3f, "rate": %.1f, "errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d, "status": %d}, "latency_ms": {%s, "max": %.3f}}\n',
    summary.requests, seconds, summary.requests / seconds, e.connect, e.read, e.write, e.timeout, e.status,
    table.concat(p, ", "), latency.max / 1000))
end

return M
