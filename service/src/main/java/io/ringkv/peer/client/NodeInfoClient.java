package io.ringkv.peer.client;

import java.net.URI;
import java.time.Duration;

import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.LoopResources;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Asks a node, on its public port, who it is and where it answers peers: {@code GET
 * /v0/cluster/self} names the node ({@code self}) and its cluster port ({@code clusterPort}), and is
 * open to anyone when access control is on. A node of an older version, met during a rolling
 * upgrade, answers 404 there: it is asked its full view at {@code GET /v0/cluster}, which holds the
 * same two fields. Discovery asks each address it finds for the name; a {@link PeerConnector} asks a peer for its port. Neither is a
 * secret: a connection to that port still has to pass the handshake.
 */
public final class NodeInfoClient {

    /** What a node tells about itself. */
    public record NodeInfo(String name, int clusterPort) {
    }

    public static final String PATH = "/v0/cluster/self";
    private static final String OLDER_NODES_PATH = "/v0/cluster";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    static {
        // The mapper fills its deserializer cache at its first use, under a lock that another
        // event loop may be holding at that moment (BlockHound saw the park): fill it here, once.
        parse("{\"self\":\"http://warm-up:1\",\"clusterPort\":1}");
    }

    private final HttpClient http;
    private final Duration timeout;

    public NodeInfoClient(LoopResources loops, Duration timeout, Duration dnsCacheMaxTtl) {
        this.timeout = timeout;
        // Asked rarely (a new address, a new connection): no pooled connections to keep.
        this.http = HttpClient.newConnection()
                .runOn(loops)
                .resolver(dns -> dns.cacheMaxTimeToLive(dnsCacheMaxTtl).cacheNegativeTimeToLive(Duration.ZERO))
                .responseTimeout(timeout);
    }

    /** The node at a base URL ({@code http://host:port}). */
    public Mono<NodeInfo> of(URI baseUrl) {
        return ask(baseUrl, PATH)
                .switchIfEmpty(Mono.defer(() -> ask(baseUrl, OLDER_NODES_PATH)))
                .switchIfEmpty(Mono.error(() -> new IllegalStateException(baseUrl + OLDER_NODES_PATH + " answered 404")))
                .timeout(timeout);
    }

    /** The node's answer at a path; empty when it answers 404 there. */
    private Mono<NodeInfo> ask(URI baseUrl, String path) {
        return http.get()
                .uri(baseUrl.resolve(path).toString())
                .responseSingle((response, body) -> {
                    if (response.status().equals(HttpResponseStatus.OK)) {
                        return body.asString();
                    }
                    return response.status().equals(HttpResponseStatus.NOT_FOUND)
                            ? Mono.<String>empty()
                            : Mono.error(new IllegalStateException(baseUrl + path + " answered " + response.status()));
                })
                .map(NodeInfoClient::parse);
    }

    static NodeInfo parse(String json) {
        JsonNode node = JSON.readTree(json);
        JsonNode self = node.get("self");
        JsonNode port = node.get("clusterPort");
        if (self == null || !self.isString() || port == null || !port.canConvertToInt()) {
            throw new IllegalStateException("not a ringkv node's self-description: " + json);
        }
        return new NodeInfo(self.asString(), port.asInt());
    }
}
