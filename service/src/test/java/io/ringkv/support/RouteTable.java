package io.ringkv.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

import org.springframework.core.io.Resource;
import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RequestPredicate;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.support.RouterFunctionMapping;

import reactor.core.publisher.Mono;

/**
 * What a RouterFunction routes, read with Spring's visitors: "METHOD path" for each route on
 * a method and a path, and the paths of the routes on a path alone (their 405 for other
 * methods). A predicate of any other kind fails the test rather than being misread.
 */
public record RouteTable(Set<String> operations, Set<String> anyMethodPaths) {

    /** Every functional route among the handler mappings a node's requests go through. */
    public static RouteTable of(List<HandlerMapping> mappings) {
        var table = new RouteTable(new TreeSet<>(), new TreeSet<>());
        mappings.stream()
                .map(mapping -> mapping instanceof RouterFunctionMapping functional ? functional.getRouterFunction() : null)
                .filter(Objects::nonNull)
                .forEach(routes -> routes.accept(table.reader()));
        return table;
    }

    private RouterFunctions.Visitor reader() {
        return new RouterFunctions.Visitor() {
            @Override
            public void route(RequestPredicate predicate, HandlerFunction<?> handler) {
                var read = new MethodsAndPath();
                predicate.accept(read);
                if (read.path == null) {
                    fail("a route without a path: " + predicate);
                } else if (read.methods.isEmpty()) {
                    anyMethodPaths.add(read.path);
                } else {
                    read.methods.forEach(method -> operations.add(method.name() + " " + read.path));
                }
            }

            @Override
            public void startNested(RequestPredicate predicate) {
                fail("nested routes (" + predicate + "): teach RouteTable to read them");
            }

            @Override
            public void endNested(RequestPredicate predicate) {
            }

            @Override
            public void resources(Function<ServerRequest, Mono<Resource>> lookup) {
                fail("static resources in the route table: teach RouteTable (and the tests that use it) to read them");
            }

            @Override
            public void attributes(Map<String, Object> attributes) {
            }

            @Override
            public void unknown(RouterFunction<?> routerFunction) {
                fail("a route this test cannot read: " + routerFunction);
            }
        };
    }

    /** The methods and the path of a predicate made of method(...) and path(...) joined by and. */
    private static final class MethodsAndPath implements RequestPredicates.Visitor {

        final Set<HttpMethod> methods = new HashSet<>();
        String path;

        @Override
        public void method(Set<HttpMethod> accepted) {
            methods.addAll(accepted);
        }

        @Override
        public void path(String pattern) {
            assertThat(path).as("a route on two paths").isNull();
            path = pattern;
        }

        @Override
        public void startAnd() {
        }

        @Override
        public void and() {
        }

        @Override
        public void endAnd() {
        }

        @Override
        public void pathExtension(String extension) {
            unreadable("pathExtension(" + extension + ")");
        }

        @Override
        public void header(String name, String value) {
            unreadable("header(" + name + ")");
        }

        @Override
        public void queryParam(String name, String value) {
            unreadable("queryParam(" + name + ")");
        }

        @Override
        public void version(String version) {
            unreadable("version(" + version + ")");
        }

        @Override
        public void startOr() {
            unreadable("or");
        }

        @Override
        public void or() {
        }

        @Override
        public void endOr() {
        }

        @Override
        public void startNegate() {
            unreadable("negate");
        }

        @Override
        public void endNegate() {
        }

        @Override
        public void unknown(RequestPredicate predicate) {
            unreadable(predicate.toString());
        }

        private static void unreadable(String what) {
            fail("a route predicate this test cannot read (" + what + "): teach RouteTable.MethodsAndPath");
        }
    }
}
