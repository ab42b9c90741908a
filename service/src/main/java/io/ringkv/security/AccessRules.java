package io.ringkv.security;

import java.util.List;
import java.util.Optional;

/**
 * Who may call which route, as one table (documented in docs/security.md, where
 * AccessRulesRouteTest checks it against every route the node serves). The first rule that
 * matches the method and path decides; a request no rule matches is denied to every client, so a
 * route added without a rule is closed, not open.
 *
 * <p>Paths are matched as the request wrote them, before any decoding: an encoded or otherwise
 * unusual spelling of a path matches no rule and is denied, never let through.
 */
public final class AccessRules {

    /** What a route needs: nothing, a role, or it is closed to everyone. */
    public enum Access {
        OPEN, READ, WRITE, ADMIN, DENIED;

        /** The role a client needs, for the accesses that take one. */
        public Optional<Role> role() {
            return switch (this) {
                case READ -> Optional.of(Role.READ);
                case WRITE -> Optional.of(Role.WRITE);
                case ADMIN -> Optional.of(Role.ADMIN);
                case OPEN, DENIED -> Optional.empty();
            };
        }
    }

    /**
     * One line of the table. {@code method} is an HTTP method or {@value #ANY_METHOD} (for the
     * other methods of a path, which the route table answers 405); {@code path} is a path, or one
     * ending in {@code /**} for everything below it.
     */
    public record Rule(String method, String path, Access access) {

        boolean matches(String requestMethod, String requestPath) {
            return (method.equals(ANY_METHOD) || method.equals(requestMethod)) && pathMatches(requestPath);
        }

        private boolean pathMatches(String requestPath) {
            if (path.endsWith(BELOW)) {
                String parent = path.substring(0, path.length() - BELOW.length() + 1);
                return requestPath.startsWith(parent) && requestPath.length() > parent.length();
            }
            return path.equals(requestPath);
        }
    }

    public static final String ANY_METHOD = "*";
    private static final String BELOW = "/**";

    private static final List<Rule> RULES = List.of(
            // Load balancers and clients wait for this before sending work.
            new Rule(ANY_METHOD, "/v0/status", Access.OPEN),
            new Rule("GET", "/v0/entity", Access.READ),
            new Rule("PUT", "/v0/entity", Access.WRITE),
            new Rule("DELETE", "/v0/entity", Access.WRITE),
            new Rule(ANY_METHOD, "/v0/entity", Access.READ),
            new Rule("GET", "/v0/entities", Access.READ),
            new Rule(ANY_METHOD, "/v0/entities", Access.READ),
            // The ring's members, their states and the transfers under way: an operator's view.
            new Rule(ANY_METHOD, "/v0/cluster", Access.ADMIN),
            // A node's name and cluster port, which peers and discovery ask for without a token:
            // neither is a secret, and a peer still has to pass the handshake.
            new Rule(ANY_METHOD, "/v0/cluster/self", Access.OPEN),
            // Kubernetes' probes carry no token.
            new Rule("GET", "/actuator/health/liveness", Access.OPEN),
            new Rule("GET", "/actuator/health/readiness", Access.OPEN),
            new Rule("GET", "/actuator", Access.READ),
            new Rule("GET", "/actuator/health", Access.READ),
            new Rule("GET", "/actuator/health/**", Access.READ),
            new Rule("GET", "/actuator/info", Access.READ),
            new Rule("GET", "/actuator/prometheus", Access.READ),
            new Rule("GET", "/actuator/metrics", Access.READ),
            new Rule("GET", "/actuator/metrics/**", Access.READ),
            new Rule("GET", "/actuator/repair", Access.READ),
            new Rule("GET", "/actuator/cleanup", Access.READ),
            new Rule("GET", "/actuator/backup", Access.READ),
            new Rule("GET", "/actuator/restore", Access.READ),
            // Start work across the cluster (repair, a backup), drop data (cleanup) or overwrite it (restore).
            new Rule("POST", "/actuator/repair", Access.ADMIN),
            new Rule("POST", "/actuator/cleanup", Access.ADMIN),
            new Rule("POST", "/actuator/backup", Access.ADMIN),
            new Rule("POST", "/actuator/restore", Access.ADMIN));

    private AccessRules() {
    }

    public static List<Rule> rules() {
        return RULES;
    }

    /** The rule that decides a request, if one does. HEAD is answered as GET, so it is decided as GET. */
    public static Optional<Rule> ruleFor(String method, String path) {
        String decidedAs = method.equals("HEAD") ? "GET" : method;
        for (Rule rule : RULES) {
            if (rule.matches(decidedAs, path)) {
                return Optional.of(rule);
            }
        }
        return Optional.empty();
    }

    /** What a request needs. */
    public static Access required(String method, String path) {
        return ruleFor(method, path).map(Rule::access).orElse(Access.DENIED);
    }

    /** Whether a client (none for a request without a token) may make the request. */
    public static boolean allows(Access access, Optional<Client> client) {
        return switch (access) {
            case OPEN -> true;
            case DENIED -> false;
            case READ, WRITE, ADMIN -> client.isPresent() && client.get().role().includes(access.role().orElseThrow());
        };
    }
}
