package io.ringkv.api;

import java.util.ArrayList;
import java.util.List;

import org.springframework.core.Ordered;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

/**
 * Runs what a route asked to run once its exchange is over: the response fully written (a range
 * streams long after its handler returned), failed, or abandoned by the client. The one reliable
 * end of an exchange is the end of the filter chain, so this filter marks it; it knows nothing of
 * paths, and routes register with {@link #onComplete}.
 */
public final class ExchangeCompletion implements WebFilter, Ordered {

    private static final String CALLBACKS = ExchangeCompletion.class.getName() + ".callbacks";
    private static final String FAILED = ExchangeCompletion.class.getName() + ".failed";

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        return chain.filter(exchange).doFinally(signal -> {
            List<Runnable> callbacks = exchange.getAttribute(CALLBACKS);
            if (callbacks != null) {
                if (signal == SignalType.ON_ERROR) {
                    exchange.getAttributes().put(FAILED, Boolean.TRUE);
                }
                callbacks.forEach(Runnable::run);
            }
        });
    }

    /**
     * The status the exchange ended with: the response's, or 500 for a failure that reached the
     * framework's own error handling (which sets the status only after the filters are done).
     */
    public static int status(ServerRequest request) {
        var status = request.exchange().getResponse().getStatusCode();
        if (status != null) {
            return status.value();
        }
        return request.exchange().getAttribute(FAILED) != null ? 500 : 200;
    }

    /** Runs the callback when the request's exchange is over, whatever the outcome. */
    public static void onComplete(ServerRequest request, Runnable callback) {
        request.exchange().getAttributes()
                .computeIfAbsent(CALLBACKS, ignored -> new ArrayList<Runnable>(2));
        List<Runnable> callbacks = request.exchange().getAttribute(CALLBACKS);
        callbacks.add(callback);
    }
}
