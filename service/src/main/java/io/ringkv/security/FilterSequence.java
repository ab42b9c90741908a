package io.ringkv.security;

import java.util.List;

import org.springframework.security.web.server.WebFilterChainProxy;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import reactor.core.publisher.Mono;

/**
 * Runs Spring Security's filters for a request one after the other, as its default decorator's
 * {@code DefaultWebFilterChain} does, less the Reactor checkpoint that one puts around each
 * filter: a label string built and an assembly operator made per filter and per request, for the
 * eight filters of the chain. That was most of the heap client authentication added to a request
 * (loadtest/BENCHMARKS.md), for a line in error traces that the chain's own refusals never print.
 */
final class FilterSequence implements WebFilterChainProxy.WebFilterChainDecorator {

    @Override
    public WebFilterChain decorate(WebFilterChain original, List<WebFilter> filters) {
        return new Step(filters, 0, original);
    }

    /** The filters from {@code next} on, then the rest of the application's chain. */
    private record Step(List<WebFilter> filters, int next, WebFilterChain end) implements WebFilterChain {

        @Override
        public Mono<Void> filter(ServerWebExchange exchange) {
            return next < filters.size() ? filters.get(next).filter(exchange, new Step(filters, next + 1, end)) : end.filter(exchange);
        }
    }
}
