-- wrk script: the mixed load (READ_RATIO of GETs, the rest PUTs of one VALUE_SIZE value) against
-- STORE (ringkv, the default, or etcd's JSON gateway, whose reads are linearizable: the default
-- serializable=false, a quorum read), closed loop: each connection sends its next request when the
-- last one answered, so that the client's own cost hides the servers less than k6's.
--   KEYSPACE=5000 VALUE_SIZE=1024 READ_RATIO=0.5 REPLICAS=2/3 wrk -t1 -c16 -d20s -s loadtest/wrk/mixed.lua http://127.0.0.1:8080
--   STORE=etcd KEYSPACE=5000 wrk -t1 -c16 -d20s -s loadtest/wrk/mixed.lua http://127.0.0.1:2379
-- Keys are k0000000000 ... as in loadtest/lib.js, uniformly chosen; RINGKV_TOKEN is sent when set
-- (common.requests). The summary goes to stdout as one JSON line (prefixed "WRK_SUMMARY ") for
-- loadtest/report.py.
local common = dofile((os.getenv("WRK_DIR") or "loadtest/wrk") .. "/common.lua")

local store = os.getenv("STORE") or "ringkv"
local requests = common.requests(store, os.getenv("REPLICAS"))
local value = store == "etcd" and common.base64(common.value()) or common.value()

request = function()
  local key = common.key()
  if common.is_read() then
    return requests.get(key)
  end
  return requests.put(key, value)
end

done = common.done
