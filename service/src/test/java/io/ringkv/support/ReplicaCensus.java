package io.ringkv.support;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.ringkv.peer.client.PeerClient;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.record.RecordBatch;

/**
 * Which node holds which version of each key: every node's own copies, read over the cluster port
 * as a peer would, in batches. What the stores hold, seen from outside: no placement code asked.
 */
public final class ReplicaCensus {

    private ReplicaCensus() {
    }

    /** For each key, the nodes that hold a copy of it (tombstones included) and that copy. */
    public static Map<String, Map<String, Record>> of(List<String> nodes, List<String> keys) {
        try (PeerTestClient peers = new PeerTestClient(TestNode.SECRET)) {
            return of(peers::of, nodes, keys);
        }
    }

    /** The same, reaching each node by its name through {@code peerOf} (nodes in containers: at their published port). */
    public static Map<String, Map<String, Record>> of(Function<String, PeerClient> peerOf, List<String> nodes, List<String> keys) {
        Map<String, Map<String, Record>> copies = new HashMap<>();
        keys.forEach(key -> copies.put(key, new HashMap<>()));
        List<byte[]> asked = keys.stream().map(key -> key.getBytes(StandardCharsets.UTF_8)).toList();
        for (String node : nodes) {
            PeerClient peer = peerOf.apply(node);
            for (int from = 0; from < asked.size(); ) {
                RecordBatch batch = peer.readBatch(asked.subList(from, Math.min(asked.size(), from + RecordBatch.MAX_KEYS)))
                        .block(Duration.ofSeconds(30));
                for (KeyedRecord found : batch.found()) {
                    copies.get(new String(found.key(), StandardCharsets.UTF_8)).put(node, found.record());
                }
                if (batch.covered() == 0) {
                    throw new IllegalStateException(node + " answered a census batch covering no key");
                }
                from += batch.covered();
            }
        }
        return copies;
    }
}
