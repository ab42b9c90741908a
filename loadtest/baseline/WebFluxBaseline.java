import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The floor under ringkv's public HTTP path within the stack it is built on: Spring WebFlux's
 * functional endpoints (a {@code RouterFunction}, as ringkv's {@code EntityRoutes}) on Reactor
 * Netty, answering ringkv's entity API from memory without storage, replication, Spring Boot or
 * Actuator. GET /v0/entity answers a fixed value, PUT drains the body and answers 201, DELETE 202,
 * GET /v0/entities?start=kN&end=kM streams M-N records of "key\nvalue", as NettyBaseline does.
 * Set beside {@code NettyBaseline.java}, it splits what a single ringkv node costs over bare
 * Netty into what WebFlux costs and what ringkv's own work costs.
 *
 * <p>Run with the JDK's source launcher and the service's runtime classpath:
 * {@code java -cp "$(cat classpath.txt)" loadtest/baseline/WebFluxBaseline.java PORT [VALUE_SIZE]}
 */
public class WebFluxBaseline {

  public static void main(String[] args) {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 8092;
    int size = args.length > 1 ? Integer.parseInt(args[1]) : 1024;
    byte[] value = new byte[size];
    new Random(42).nextBytes(value);

    RouterFunction<ServerResponse> routes = RouterFunctions.route()
        .GET("/v0/entity", request -> ServerResponse.ok()
            .contentType(MediaType.APPLICATION_OCTET_STREAM)
            .bodyValue(value))
        .PUT("/v0/entity", request -> request.body(BodyExtractors.toDataBuffers())
            .doOnNext(DataBufferUtils::release)
            .then(ServerResponse.status(HttpStatus.CREATED).build()))
        .DELETE("/v0/entity", request -> ServerResponse.status(HttpStatus.ACCEPTED).build())
        .GET("/v0/entities", request -> range(request, value))
        .GET("/v0/status", request -> ServerResponse.ok().bodyValue("OK"))
        .build();
    ReactorHttpHandlerAdapter adapter = new ReactorHttpHandlerAdapter(RouterFunctions.toHttpHandler(routes));

    DisposableServer server = HttpServer.create()
        .host("127.0.0.1")
        .port(port)
        .handle(adapter)
        .bindNow();
    System.out.println("WebFluxBaseline serving on http://127.0.0.1:" + server.port()
        + " with values of " + size + " B");
    Runtime.getRuntime().addShutdownHook(new Thread(server::disposeNow));
    server.onDispose().block();
  }

  private static Mono<ServerResponse> range(ServerRequest request, byte[] value) {
    String first = request.queryParam("start").orElse("k0");
    long start = number(first);
    long end = number(request.queryParam("end").orElse("k0"));
    int width = Math.max(1, first.length() - 1);
    long count = Math.max(0, Math.min(end - start, 10_000));
    DataBufferFactory buffers = request.exchange().getResponse().bufferFactory();
    Flux<DataBuffer> records = Flux.range(0, (int) count).map(i -> {
      byte[] key = ("k" + String.format("%0" + width + "d", start + i)).getBytes(StandardCharsets.US_ASCII);
      return buffers.allocateBuffer(key.length + 1 + value.length).write(key).write((byte) '\n').write(value);
    });
    return ServerResponse.ok().contentType(MediaType.APPLICATION_OCTET_STREAM)
        .body(BodyInserters.fromDataBuffers(records));
  }

  // Keys of the load scripts are "k" and ten digits; anything else counts as 0.
  private static long number(String key) {
    try {
      return Long.parseLong(key.substring(1));
    } catch (RuntimeException e) {
      return 0;
    }
  }
}
