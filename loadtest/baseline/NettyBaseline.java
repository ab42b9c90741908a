import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The floor under ringkv's latency: a bare Reactor Netty server (the HTTP stack ringkv runs on)
 * speaking ringkv's public API without storage, replication or Spring. GET /v0/entity answers a
 * fixed value held in memory, PUT drains the body and answers 201, DELETE 202, and
 * GET /v0/entities?start=kN&end=kM streams M-N records of "key\nvalue", one chunk each.
 *
 * <p>Run with the JDK's source launcher and the service's runtime classpath:
 * {@code java -cp "$(cat classpath.txt)" loadtest/baseline/NettyBaseline.java PORT [VALUE_SIZE]}
 */
public class NettyBaseline {

  public static void main(String[] args) {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 8091;
    int size = args.length > 1 ? Integer.parseInt(args[1]) : 1024;
    byte[] value = new byte[size];
    new Random(42).nextBytes(value);

    DisposableServer server = HttpServer.create()
        .host("127.0.0.1")
        .port(port)
        .handle((req, res) -> handle(req, res, value))
        .bindNow();
    System.out.println("NettyBaseline serving on http://127.0.0.1:" + server.port()
        + " with values of " + size + " B");
    Runtime.getRuntime().addShutdownHook(new Thread(server::disposeNow));
    server.onDispose().block();
  }

  private static Publisher<Void> handle(HttpServerRequest req, HttpServerResponse res, byte[] value) {
    String path = req.fullPath();
    HttpMethod method = req.method();
    if (path.equals("/v0/entity")) {
      if (method.equals(HttpMethod.GET)) {
        return res.header(HttpHeaderNames.CONTENT_TYPE, "application/octet-stream")
            .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(value.length))
            .send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(value)));
      }
      if (method.equals(HttpMethod.PUT)) {
        // Read the whole body before answering, as the real service does.
        return req.receive().then().then(Mono.defer(() -> {
          res.status(HttpResponseStatus.CREATED).header(HttpHeaderNames.CONTENT_LENGTH, "0");
          return res.send();
        }).then());
      }
      if (method.equals(HttpMethod.DELETE)) {
        return res.status(HttpResponseStatus.ACCEPTED).header(HttpHeaderNames.CONTENT_LENGTH, "0").send();
      }
      return res.status(HttpResponseStatus.METHOD_NOT_ALLOWED).send();
    }
    if (path.equals("/v0/entities") && method.equals(HttpMethod.GET)) {
      QueryStringDecoder query = new QueryStringDecoder(req.uri());
      long start = number(query.parameters().get("start"));
      long end = number(query.parameters().get("end"));
      int width = Math.max(1, first(query.parameters().get("start")).length() - 1);
      long count = Math.max(0, Math.min(end - start, 10_000));
      Flux<ByteBuf> records = Flux.range(0, (int) count).map(i -> {
        byte[] key = ("k" + String.format("%0" + width + "d", start + i)).getBytes(StandardCharsets.US_ASCII);
        ByteBuf buf = Unpooled.buffer(key.length + 1 + value.length);
        return buf.writeBytes(key).writeByte('\n').writeBytes(value);
      });
      return res.header(HttpHeaderNames.CONTENT_TYPE, "application/octet-stream").send(records, b -> true);
    }
    if (path.equals("/v0/status")) {
      return res.sendString(Mono.just("OK"));
    }
    return res.status(HttpResponseStatus.NOT_FOUND).send();
  }

  private static String first(List<String> values) {
    return values == null || values.isEmpty() ? "k0" : values.get(0);
  }

  // Keys of the load scripts are "k" and ten digits; anything else counts as 0.
  private static long number(List<String> values) {
    String s = first(values);
    try {
      return Long.parseLong(s.substring(1));
    } catch (RuntimeException e) {
      return 0;
    }
  }
}
