package io.ringkv.api;

import static org.springframework.web.reactive.function.server.RequestPredicates.path;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.function.server.support.RouterFunctionMapping;

import io.ringkv.repair.RepairScheduler;
import io.ringkv.backup.Restore;
import io.ringkv.handover.DataMovement;
import io.ringkv.health.PeerMonitors;
import io.ringkv.health.Readiness;
import io.ringkv.metrics.ClientRequestMetrics;
import io.ringkv.overload.AdmissionControl;
import io.ringkv.record.HybridClock;
import io.ringkv.peer.client.NodeInfoClient;
import io.ringkv.peer.server.PeerServer;
import io.ringkv.replication.Coordinator;
import io.ringkv.ring.ClusterMembership;
import io.ringkv.conditional.ConditionalCoordinator;
import io.ringkv.discovery.DnsDiscovery;
import reactor.core.publisher.Mono;

/**
 * The public API as one route table. Each route names its operation, and gets the same three
 * things attached: metrics (timed by operation and status once the exchange is over), admission
 * (a bounded slot for the whole exchange, or 503 at once) and error mapping (a clear 4xx, or 503
 * and 504 for node trouble). Nothing matches request paths outside this table.
 */
@Configuration(proxyBeanMethods = false)
public class ApiRoutes {

    /**
     * What the API takes from the node's settings, checked where they are declared.
     *
     * @param maxValueBytes the largest value a PUT may carry (ringkv.max-value-size)
     * @param bodyTimeout   how long a PUT's body may take to arrive (ringkv.overload.body-timeout)
     * @param maxTtl        the longest time to live a PUT may give (ringkv.max-ttl)
     */
    public record Settings(int maxValueBytes, Duration bodyTimeout, Duration maxTtl) {
    }

    /**
     * The route table is asked first. Spring asks its handler mappings in order, and Actuator's
     * (when it shares the public port, as it does unless management.server.port is set) come
     * before the route table by default: every API request was first looked up, and missed, in
     * Actuator's endpoint mappings. The table matches only its own {@code /v0/} paths.
     */
    @Bean
    static BeanPostProcessor routeTableFirst() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessBeforeInitialization(Object bean, String beanName) {
                if (bean instanceof RouterFunctionMapping mapping) {
                    mapping.setOrder(Ordered.HIGHEST_PRECEDENCE);
                }
                return bean;
            }
        };
    }

    @Bean
    ExchangeCompletion exchangeCompletion() {
        return new ExchangeCompletion();
    }

    @Bean
    NettyServerCustomizer connectionHooks() {
        return ConnectionHooks.customizer();
    }

    /** The same answers for a failure of a streamed body (a range) that comes before its first chunk. */
    @Bean
    ApiErrors.BeforeFirstChunk streamedBodyErrors() {
        return new ApiErrors.BeforeFirstChunk();
    }

    @Bean
    RouterFunction<ServerResponse> publicApi(Settings settings, Coordinator coordinator, ConditionalCoordinator conditional,
            HybridClock clock, ClusterMembership membership,
            PeerMonitors monitors, ObjectProvider<DnsDiscovery> discovery, PeerServer peerServer, AdmissionControl admission,
            ClientRequestMetrics metrics, RepairScheduler repairScheduler, DataMovement dataMovement, Readiness readiness,
            ObjectProvider<Restore> restore) {
        var entities = new EntityHandler(coordinator, conditional, admission, clock, settings);
        Restore restores = restore.getIfAvailable();
        var cluster = new ClusterHandler(membership, monitors, discovery.getIfAvailable(), peerServer.port(), repairScheduler,
                dataMovement, restores == null ? Optional::empty : restores::progress);
        var routes = new Routes(admission, metrics);
        return RouterFunctions.route()
                .GET("/v0/entity", routes.api("get", entities::get))
                .PUT("/v0/entity", routes.afterBody("put", entities::arrive, entities::put))
                .DELETE("/v0/entity", routes.api("delete", entities::delete))
                .route(path("/v0/entity"), methodNotAllowed("GET, PUT, DELETE"))
                .GET("/v0/entities", routes.api("range", entities::range))
                .route(path("/v0/entities"), methodNotAllowed("GET"))
                .GET("/v0/status", routes.api("status", request -> status(readiness)))
                .route(path("/v0/status"), methodNotAllowed("GET"))
                // An operator's view (admin when access control is on): never refused for overload.
                .GET("/v0/cluster", routes.unbounded("cluster", cluster::view))
                .route(path("/v0/cluster"), methodNotAllowed("GET"))
                // Peers and discovery ask every node for its name and cluster port here: open to
                // all, as neither is a secret (a peer still has to pass the handshake), and never refused.
                .GET(NodeInfoClient.PATH, routes.unbounded("cluster-self", cluster::self))
                .route(path(NodeInfoClient.PATH), methodNotAllowed("GET"))
                .build();
    }

    /**
     * 200 only when the node is ready, by the same condition as its readiness probe: a client
     * that waits for 200 here then meets a node that can coordinate and store. Otherwise 503 with
     * Retry-After and why (starting, joining, shutting down, storage trouble).
     */
    private static Mono<ServerResponse> status(Readiness readiness) {
        return readiness.check().flatMap(answer -> answer.ready()
                ? ServerResponse.ok().contentType(MediaType.TEXT_PLAIN).bodyValue("OK")
                : ServerResponse.status(HttpStatus.SERVICE_UNAVAILABLE).header(HttpHeaders.RETRY_AFTER, "1")
                        .contentType(MediaType.TEXT_PLAIN).bodyValue(answer.reason()));
    }

    private static HandlerFunction<ServerResponse> methodNotAllowed(String allowed) {
        return request -> ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
                .header(HttpHeaders.ALLOW, allowed)
                .contentType(MediaType.TEXT_PLAIN)
                .bodyValue(request.method() + " is not allowed here; use " + allowed);
    }

    /** What every route of the public API gets. */
    private record Routes(AdmissionControl admission, ClientRequestMetrics metrics) {

        /** Timed, admitted within the bound, and with its failures answered. */
        HandlerFunction<ServerResponse> api(String operation, HandlerFunction<ServerResponse> handler) {
            return timed(operation, admitted(ApiErrors.mapped(handler)));
        }

        /**
         * Like {@link #api}, but admitted only once {@code arrive} has the request's body: a
         * request whose body is still on its way is no work yet, and must not hold a slot.
         */
        <T> HandlerFunction<ServerResponse> afterBody(String operation, Function<ServerRequest, Mono<T>> arrive,
                Function<T, Mono<ServerResponse>> handler) {
            return timed(operation, ApiErrors.mapped(request -> arrive.apply(request)
                    .flatMap(arrived -> enter(request, () -> handler.apply(arrived)))));
        }

        /** Timed and with its failures answered, but never refused for overload. */
        HandlerFunction<ServerResponse> unbounded(String operation, HandlerFunction<ServerResponse> handler) {
            return timed(operation, ApiErrors.mapped(handler));
        }

        private HandlerFunction<ServerResponse> timed(String operation, HandlerFunction<ServerResponse> handler) {
            return request -> {
                long started = System.nanoTime();
                ExchangeCompletion.onComplete(request,
                        () -> metrics.record(operation, ExchangeCompletion.status(request), System.nanoTime() - started));
                return handler.handle(request);
            };
        }

        private HandlerFunction<ServerResponse> admitted(HandlerFunction<ServerResponse> handler) {
            return request -> enter(request, () -> handler.handle(request));
        }

        /** Runs the work holding a slot until the exchange is over, or answers 503 when none is free. */
        private Mono<ServerResponse> enter(ServerRequest request, Supplier<Mono<ServerResponse>> work) {
            if (!admission.tryEnter()) {
                return ApiErrors.overloaded();
            }
            ExchangeCompletion.onComplete(request, admission::leave);
            return work.get();
        }
    }
}
