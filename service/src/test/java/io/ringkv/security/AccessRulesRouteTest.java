package io.ringkv.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.endpoint.web.WebEndpointsSupplier;
import org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.DispatcherHandler;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.security.AccessRules.Access;
import io.ringkv.support.BlockHoundInstaller;
import io.ringkv.support.RouteTable;
import io.ringkv.support.TestNode;

/**
 * Every route a node serves, read from the node itself (its route table and its exposed Actuator
 * operations, on a management port of its own as the chart runs it), sent with no token and with
 * a token of each role, answered as the roles table of docs/security.md says; that table and
 * {@link AccessRules} name each route. A route added without a rule, or without its line in the
 * docs, fails here.
 */
class AccessRulesRouteTest {

    private static final Path SECURITY_DOC = Path.of("../docs/security.md");
    private static final Pattern ROW = Pattern.compile("^\\| `([A-Z*]+) (/[^`]*)` \\| (open|read|write|admin) \\|$", Pattern.MULTILINE);
    /** What a path variable of a route is given when the test sends it. */
    private static final Map<String, String> VARIABLE_EXAMPLES = Map.of("{*path}", "storage",
            "{requiredMetricName}", "ringkv.client.requests.inflight");
    private static final Map<Role, String> TOKENS = Map.of(Role.READ, "read-0123456789abcdef",
            Role.WRITE, "write-0123456789abcdef", Role.ADMIN, "admin-0123456789abcdef");

    @TempDir
    static Path dir;
    private static TestNode node;
    private static int managementPort;
    private static double refusedWhileStarting;

    @BeforeAll
    static void start() throws IOException {
        Path tokens = Files.writeString(dir.resolve("tokens"), """
                # one per role
                %s read reader
                %s write writer
                %s admin operator
                """.formatted(TOKENS.get(Role.READ), TOKENS.get(Role.WRITE), TOKENS.get(Role.ADMIN)));
        List<Integer> ports = TestNode.freePorts(2);
        managementPort = ports.get(1);
        node = TestNode.create(ports.get(0), dir.resolve("data"), List.of(ports.get(0)), Map.of(
                "management.server.port", managementPort,
                "ringkv.security.enabled", true,
                "ringkv.security.tokens-file", tokens)).start();
        refusedWhileStarting = node.bean(MeterRegistry.class).get("ringkv.security.failed.attempts").counters().stream()
                .mapToDouble(counter -> counter.count()).sum();
    }

    /** The warm-up reads through the public API before the node is ready: with a token of the node's own. */
    @Test
    void theWarmUpIsNotRefused() {
        assertThat(refusedWhileStarting).isZero();
    }

    @AfterAll
    static void stop() {
        node.stop();
    }

    @Test
    void everyRouteIsInTheRolesTableAndHasItsRule() throws IOException {
        Map<String, Access> documented = documentedRoutes();
        assertThat(documented.keySet()).as("routes in the roles table of %s, and routes the node serves", SECURITY_DOC)
                .containsExactlyInAnyOrderElementsOf(servedRoutes());
        documented.forEach((route, access) -> {
            String[] methodAndPath = route.split(" ");
            String method = methodAndPath[0].equals(AccessRules.ANY_METHOD) ? "PATCH" : methodAndPath[0];
            String path = concrete(methodAndPath[1]);
            assertThat(AccessRules.ruleFor(method, path)).as("the rule for %s (sent as %s %s)", route, method, path).isPresent();
            assertThat(AccessRules.required(method, path)).as("what %s needs", route).isEqualTo(access);
        });
    }

    @Test
    void everyRouteIsAnsweredForEachRoleAsDocumented() throws IOException {
        int blockingMark = BlockHoundInstaller.violations().size();
        List<String> wrong = new ArrayList<>();
        documentedRoutes().forEach((route, access) -> {
            String[] methodAndPath = route.split(" ");
            HttpMethod method = HttpMethod.valueOf(methodAndPath[0].equals(AccessRules.ANY_METHOD) ? "PATCH" : methodAndPath[0]);
            String path = concrete(methodAndPath[1]);
            for (Optional<Role> role : List.of(Optional.<Role>empty(), Optional.of(Role.READ), Optional.of(Role.WRITE),
                    Optional.of(Role.ADMIN))) {
                var answer = send(method, path, role.map(TOKENS::get));
                int status = answer.getStatus().value();
                int expected = expectedRefusal(access, role);
                String what = route + " with " + role.map(Role::label).orElse("no token") + ": " + status;
                if (expected == 0 ? status == 401 || status == 403 : status != expected) {
                    wrong.add(what + ", expected " + (expected == 0 ? "neither 401 nor 403" : expected));
                } else if (status == 401 && !String.valueOf(answer.getResponseHeaders().getFirst(HttpHeaders.WWW_AUTHENTICATE))
                        .startsWith("Bearer realm=\"ringkv\"")) {
                    wrong.add(what + " without WWW-Authenticate: Bearer realm=\"ringkv\"");
                }
            }
        });
        assertThat(wrong).as("answers that differ from the roles table").isEmpty();
        assertThat(BlockHoundInstaller.violationsSince(blockingMark)).as("blocking calls on event loops").isEmpty();
    }

    /** Spot checks of the table's outcome that matter most on the management port. */
    @Test
    void theManagementPortNeedsTokensButNotForTheProbes() {
        WebTestClient management = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + managementPort).build();
        management.post().uri("/actuator/repair").exchange().expectStatus().isUnauthorized();
        management.post().uri("/actuator/cleanup").header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKENS.get(Role.WRITE))
                .exchange().expectStatus().isForbidden();
        // The probes are open, with the status alone: the ring's members and the data directory
        // only for a client with a token.
        for (String probe : List.of("/actuator/health/liveness", "/actuator/health/readiness")) {
            management.get().uri(probe).exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.status").isEqualTo("UP").jsonPath("$.components").doesNotExist();
        }
        management.get().uri("/actuator/health/readiness").header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKENS.get(Role.READ))
                .exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.components.ring.details.members").exists();
        management.get().uri("/actuator/prometheus").exchange().expectStatus().isUnauthorized();
        management.get().uri("/actuator/prometheus").header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKENS.get(Role.READ))
                .exchange().expectStatus().isOk();
        assertThat(node.bean(ClientTokens.class).isRunning()).as("the token file's reload rounds run").isTrue();
    }

    @Test
    void aTokenInTheQueryStringIsRefusedEvenAValidOne() {
        for (String parameter : BearerTokens.QUERY_PARAMETERS) {
            node.client().get().uri("/v0/entity?id=k&" + parameter + "=" + TOKENS.get(Role.ADMIN))
                    .header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKENS.get(Role.ADMIN))
                    .exchange().expectStatus().isBadRequest()
                    .expectBody().jsonPath("$.detail").value(String.class,
                            detail -> assertThat(detail).contains("query string").contains("Authorization: Bearer"));
        }
    }

    @Test
    void refusalsAreAnsweredAndCountedByReason() {
        double unknown = failed("unknown_token");
        double missing = failed("missing_token");
        double forbidden = failed("forbidden");
        node.client().get().uri("/v0/entity?id=k").header(HttpHeaders.AUTHORIZATION, "Bearer not-a-token-0123456789")
                .exchange().expectStatus().isUnauthorized()
                .expectHeader().valueEquals(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"ringkv\", error=\"invalid_token\"")
                .expectHeader().contentType("application/problem+json")
                .expectBody().jsonPath("$.status").isEqualTo(401);
        node.client().get().uri("/v0/entity?id=k").header(HttpHeaders.AUTHORIZATION, "Basic dXNlcjpwYXNz")
                .exchange().expectStatus().isUnauthorized()
                .expectHeader().valueEquals(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"ringkv\"");
        node.client().put().uri("/v0/entity?id=k").header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKENS.get(Role.READ))
                .bodyValue("v".getBytes()).exchange().expectStatus().isForbidden()
                .expectBody().jsonPath("$.status").isEqualTo(403);
        node.client().put().uri("/v0/entity?id=k").header(HttpHeaders.AUTHORIZATION, "Bearer " + TOKENS.get(Role.WRITE))
                .bodyValue("v".getBytes()).exchange().expectStatus().isCreated();
        assertThat(failed("unknown_token")).isEqualTo(unknown + 1);
        assertThat(failed("missing_token")).isEqualTo(missing + 1);
        assertThat(failed("forbidden")).isEqualTo(forbidden + 1);
    }

    private static double failed(String reason) {
        return node.bean(MeterRegistry.class).get("ringkv.security.failed.attempts").tag("reason", reason).counter().count();
    }

    /** 0 when the request must get through, else the refusal it must get. */
    private static int expectedRefusal(Access access, Optional<Role> role) {
        if (access == Access.OPEN) {
            return 0;
        }
        if (role.isEmpty()) {
            return 401;
        }
        return role.get().includes(access.role().orElseThrow()) ? 0 : 403;
    }

    private static EntityExchangeResult<byte[]> send(HttpMethod method, String path, Optional<String> token) {
        boolean actuator = path.startsWith(actuatorBase());
        WebTestClient client = actuator
                ? WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + managementPort).responseTimeout(Duration.ofSeconds(30)).build()
                : node.client();
        var request = client.method(method).uri(path);
        token.ifPresent(value -> request.header(HttpHeaders.AUTHORIZATION, "Bearer " + value));
        return request.exchange().expectBody().returnResult();
    }

    /** "METHOD path" of every route the node serves: its route table and its exposed Actuator operations. */
    private static TreeSet<String> servedRoutes() {
        var served = new TreeSet<String>();
        RouteTable routes = RouteTable.of(node.bean(DispatcherHandler.class).getHandlerMappings());
        served.addAll(routes.operations());
        routes.anyMethodPaths().forEach(path -> served.add(AccessRules.ANY_METHOD + " " + path));
        String base = actuatorBase();
        served.add("GET " + base);
        node.bean(WebEndpointsSupplier.class).getEndpoints().forEach(endpoint -> endpoint.getOperations().forEach(operation -> {
            var predicate = operation.getRequestPredicate();
            String path = predicate.getPath().startsWith(base.substring(1)) ? "/" + predicate.getPath() : base + "/" + predicate.getPath();
            served.add(predicate.getHttpMethod().name() + " " + path);
        }));
        // The health groups are routes of their own to the probes that call them.
        node.bean(HealthEndpointGroups.class).getNames().forEach(group -> served.add("GET " + base + "/health/" + group));
        return served;
    }

    private static String actuatorBase() {
        return node.bean(WebEndpointProperties.class).getBasePath();
    }

    /** The roles table of docs/security.md: "METHOD path" to what it needs. */
    private static Map<String, Access> documentedRoutes() throws IOException {
        Map<String, Access> routes = new TreeMap<>();
        Matcher row = ROW.matcher(Files.readString(SECURITY_DOC));
        while (row.find()) {
            Access previous = routes.put(row.group(1) + " " + row.group(2), Access.valueOf(row.group(3).toUpperCase()));
            assertThat(previous).as("%s %s twice in the roles table", row.group(1), row.group(2)).isNull();
        }
        assertThat(routes).as("rows of the roles table in %s", SECURITY_DOC).isNotEmpty();
        return routes;
    }

    /** The path with each variable given its example. */
    private static String concrete(String path) {
        String concrete = path;
        for (var example : VARIABLE_EXAMPLES.entrySet()) {
            concrete = concrete.replace(example.getKey(), example.getValue());
        }
        if (concrete.contains("{")) {
            fail("a route variable without an example (" + path + "): add one to VARIABLE_EXAMPLES");
        }
        return concrete;
    }
}
