-- wrk script: the same mixed load as ringkv.lua against etcd's JSON gateway (etcd 3.4):
-- POST /v3/kv/put {"key": base64, "value": base64} and POST /v3/kv/range {"key": base64}.
--   KEYSPACE=5000 VALUE_SIZE=1024 READ_RATIO=0.5 wrk -t1 -c16 -d20s -s loadtest/wrk/etcd.lua http://127.0.0.1:2379
-- etcd's reads are linearizable (the default serializable=false), as a quorum read.
local common = dofile((os.getenv("WRK_DIR") or "loadtest/wrk") .. "/common.lua")

local value64 = common.base64(common.value())
local headers = { ["Content-Type"] = "application/json" }
local keys64 = {}

request = function()
  local index = common.index()
  local key64 = keys64[index]
  if key64 == nil then
    key64 = common.base64(common.key_at(index))
    keys64[index] = key64
  end
  if common.is_read() then
    return wrk.format("POST", "/v3/kv/range", headers, '{"key":"' .. key64 .. '"}')
  end
  return wrk.format("POST", "/v3/kv/put", headers, '{"key":"' .. key64 .. '","value":"' .. value64 .. '"}')
end

done = common.done
