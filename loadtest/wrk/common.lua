-- What loadtest/wrk/ringkv.lua and etcd.lua share: the key space, the value, the read/write mix
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

local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
function M.base64(data)
  return ((data:gsub(".", function(c)
    local bits, b = "", c:byte()
    for i = 8, 1, -1 do
      bits = bits .. (b % 2 ^ i - b % 2 ^ (i - 1) > 0 and "1" or "0")
    end
    return bits
  end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
    if #x < 6 then return "" end
    local c = 0
    for i = 1, 6 do
      c = c + (x:sub(i, i) == "1" and 2 ^ (6 - i) or 0)
    end
    return alphabet:sub(c + 1, c + 1)
  end) .. ({ "", "==", "=" })[#data % 3 + 1])
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
