-- wrk script: the mixed load against ringkv, closed loop (each connection sends its next request
-- when the last one answered), so that the client's own cost hides the servers less than k6's.
--   KEYSPACE=5000 VALUE_SIZE=1024 READ_RATIO=0.5 REPLICAS=2/3 wrk -t1 -c16 -d20s -s loadtest/wrk/ringkv.lua http://127.0.0.1:8080
-- Keys are k0000000000 ... as in loadtest/lib.js, uniformly chosen. The summary goes to stdout as
-- one JSON line (prefixed "WRK_SUMMARY ") for loadtest/report.py.
local common = dofile((os.getenv("WRK_DIR") or "loadtest/wrk") .. "/common.lua")

local replicas = os.getenv("REPLICAS") or ""
local suffix = replicas ~= "" and ("&replicas=" .. replicas) or ""
local value = common.value()
local put_headers = { ["Content-Type"] = "application/octet-stream" }
-- A node with ringkv.security.enabled wants a token (loadtest/ab.sh's B_SECURE gives one).
local token = os.getenv("RINGKV_TOKEN") or ""
if token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
  put_headers["Authorization"] = wrk.headers["Authorization"]
end

request = function()
  local path = "/v0/entity?id=" .. common.key() .. suffix
  if common.is_read() then
    return wrk.format("GET", path)
  end
  return wrk.format("PUT", path, put_headers, value)
end

done = common.done
