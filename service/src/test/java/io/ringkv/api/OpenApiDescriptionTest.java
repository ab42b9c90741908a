package io.ringkv.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.core.io.Resource;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RequestPredicate;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.support.RouterFunctionMapping;
import org.springframework.web.util.UriBuilder;

import io.ringkv.security.SecurityConfiguration;
import io.ringkv.support.RouteTable;
import io.ringkv.support.TestNode;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * docs/openapi.yaml, the public API's description for client generators, against the code: a
 * valid OpenAPI document; the same (path, method) pairs as the route table a node runs, which is
 * read from the node itself; the status codes the api package answers; the /v0/cluster schema as
 * its records are serialized; and each operation, sent with its documented examples, answered as
 * documented.
 */
class OpenApiDescriptionTest {

    /** Tests run in the module's directory, service/. */
    private static final Path DESCRIPTION = Path.of("../docs/openapi.yaml");
    private static final Path API_SOURCES = Path.of("src/main/java", ApiRoutes.class.getPackageName().replace('.', '/'));
    /** Client authentication answers for the API too (401, 403, and 400 for a token in the query string). */
    private static final Path SECURITY_SOURCES = Path.of("src/main/java", SecurityConfiguration.class.getPackageName().replace('.', '/'));

    @TempDir
    static Path dataDir;

    private static SwaggerParseResult parsed;
    private static OpenAPI description;
    private static TestNode node;

    @BeforeAll
    static void start() throws IOException {
        parsed = new OpenAPIV3Parser().readContents(Files.readString(DESCRIPTION), null, new ParseOptions());
        description = parsed.getOpenAPI();
        int port = TestNode.freePorts(1).get(0);
        node = TestNode.create(port, dataDir, List.of(port), Map.of()).start();
    }

    @AfterAll
    static void stop() {
        node.stop();
    }

    @Test
    void isAValidOpenApiDocument() {
        assertThat(parsed.getMessages()).as("what the OpenAPI parser found wrong in " + DESCRIPTION).isEmpty();
        assertThat(description.getOpenapi()).startsWith("3.");
    }

    @Test
    void describesEveryRouteOfTheNodeAndNoOther() {
        RouteTable routes = RouteTable.of(node.bean(DispatcherHandler.class).getHandlerMappings());
        assertThat(documentedOperations().keySet()).as("\"METHOD path\" in %s, and in the route table", DESCRIPTION)
                .containsExactlyInAnyOrderElementsOf(routes.operations());
        assertThat(description.getPaths().keySet()).as("the paths whose other methods the route table answers 405")
                .containsExactlyInAnyOrderElementsOf(routes.anyMethodPaths());
    }

    /** The description names the methods each path takes; the node's 405 for any other must name the same. */
    @Test
    void aMethodAPathDoesNotTakeGets405AllowingTheDescribedOnes() {
        description.getPaths().forEach((path, item) -> {
            Set<String> described = new TreeSet<>(item.readOperationsMap().keySet().stream().map(Enum::name).toList());
            var answer = node.client().method(HttpMethod.PATCH).uri(path).exchange().expectBody().returnResult();
            assertThat(answer.getStatus().value()).as("PATCH %s", path).isEqualTo(HttpStatus.METHOD_NOT_ALLOWED.value());
            assertThat(new TreeSet<>(answer.getResponseHeaders().getAllow().stream().map(HttpMethod::name).toList()))
                    .as("Allow of %s", path).isEqualTo(described);
        });
    }

    /**
     * The status codes the api and security packages' code answers with, read from their source,
     * are those the description lists for its operations; 405 is the route table's answer to other
     * methods, described per path and checked above.
     */
    @Test
    void describesEveryStatusCodeTheApiAnswersAndNoOther() throws IOException {
        Set<Integer> described = new TreeSet<>();
        documentedOperations().values().forEach(operation ->
                operation.getResponses().keySet().forEach(code -> described.add(Integer.parseInt(code))));
        described.add(HttpStatus.METHOD_NOT_ALLOWED.value());
        Set<Integer> answered = new TreeSet<>(StatusCodes.answeredIn(API_SOURCES));
        answered.addAll(StatusCodes.answeredIn(SECURITY_SOURCES));
        assertThat(described).isEqualTo(answered);
    }

    /** A generated client reads /v0/cluster with these schemas: they must be the records Jackson serializes. */
    @Test
    void theClusterSchemaIsTheClusterViewRecord() {
        Schema<?> schema = description.getComponents().getSchemas().get("ClusterView");
        assertMatches(schema, ClusterHandler.ClusterView.class, "ClusterView");
    }

    @Test
    void theClusterSelfSchemaIsTheSelfViewRecord() {
        Schema<?> schema = description.getComponents().getSchemas().get("SelfView");
        assertMatches(schema, ClusterHandler.SelfView.class, "SelfView");
    }

    /**
     * Every operation, sent with the examples of its required parameters and of its body (the
     * writes first and the deletes last, so that the reads find something), gets its one
     * documented 2xx, with the documented content type, and a JSON body with the documented
     * properties.
     */
    @Test
    void eachOperationAnswersItsExamplesAsDescribed() {
        documentedOperations().entrySet().stream()
                .sorted(Comparator.comparing(operation -> List.of("PUT", "GET", "DELETE").indexOf(operation.getKey().split(" ")[0])))
                .forEach(operation -> {
                    String[] methodAndPath = operation.getKey().split(" ");
                    assertAnswersAsDescribed(methodAndPath[0], methodAndPath[1], operation.getValue());
                });
    }

    private static void assertAnswersAsDescribed(String method, String path, Operation operation) {
        String what = method + " " + path;
        Map<String, Object> examples = new TreeMap<>();
        for (Parameter parameter : operation.getParameters() == null ? List.<Parameter>of() : operation.getParameters()) {
            Parameter resolved = resolve(parameter);
            if (Boolean.TRUE.equals(resolved.getRequired())) {
                assertThat(resolved.getExample()).as("example of %s's required '%s'", what, resolved.getName()).isNotNull();
                examples.put(resolved.getName(), resolved.getExample());
            }
        }
        var request = node.client().method(HttpMethod.valueOf(method)).uri(uri -> withQuery(uri.path(path), examples));
        var sent = operation.getRequestBody() == null ? request
                : request.bodyValue(String.valueOf(operation.getRequestBody().getContent().values().iterator().next().getExample()));
        EntityExchangeResult<byte[]> answer = sent.exchange().expectBody().returnResult();

        List<String> successes = operation.getResponses().keySet().stream().filter(code -> code.startsWith("2")).toList();
        assertThat(successes).as("%s's documented success", what).hasSize(1);
        assertThat(answer.getStatus().value()).as(what).isEqualTo(Integer.parseInt(successes.get(0)));
        Map<String, MediaType> content = resolve(operation.getResponses().get(successes.get(0))).getContent();
        var contentType = answer.getResponseHeaders().getContentType();
        if (content == null) {
            assertThat(answer.getResponseBody()).as("%s's body", what).isNullOrEmpty();
            return;
        }
        assertThat(contentType).as("%s's Content-Type", what).isNotNull();
        String mediaType = contentType.getType() + "/" + contentType.getSubtype();
        assertThat(content).as("%s's content", what).containsOnlyKeys(mediaType);
        Schema<?> schema = resolve(content.get(mediaType).getSchema());
        if (schema.getProperties() != null) {
            var fields = new TreeSet<String>();
            JsonMapper.shared().readTree(answer.getResponseBody()).propertyNames().forEach(fields::add);
            assertThat(fields).as("%s's JSON fields", what).isEqualTo(new TreeSet<>(schema.getProperties().keySet()));
        }
    }

    private static URI withQuery(UriBuilder uri, Map<String, Object> parameters) {
        parameters.keySet().forEach(name -> uri.queryParam(name, "{" + name + "}"));
        return uri.build(parameters);
    }

    /**
     * A schema against the Java type Jackson serializes: a record's components are its required
     * properties, an enum's constants its values, a List an array, and the JSON type of a
     * scalar its Java type's (a long as int64, which a client must not read as a 32-bit int).
     */
    private static void assertMatches(Schema<?> described, Type type, String where) {
        Schema<?> schema = resolve(described);
        Class<?> raw = type instanceof ParameterizedType generic ? (Class<?>) generic.getRawType() : (Class<?>) type;
        if (raw.isRecord()) {
            List<String> components = Arrays.stream(raw.getRecordComponents()).map(RecordComponent::getName).toList();
            assertThat(schema.getProperties()).as("%s's properties", where).containsOnlyKeys(components);
            assertThat(schema.getRequired()).as("%s's required properties", where).containsExactlyInAnyOrderElementsOf(components);
            for (RecordComponent component : raw.getRecordComponents()) {
                assertMatches(schema.getProperties().get(component.getName()), component.getGenericType(),
                        where + "." + component.getName());
            }
        } else if (raw.isEnum()) {
            assertThat(schema.getType()).as(where).isEqualTo("string");
            assertThat(schema.getEnum().stream().map(String::valueOf).toList()).as("%s's values", where)
                    .containsExactlyElementsOf(Arrays.stream(raw.getEnumConstants()).map(c -> ((Enum<?>) c).name()).toList());
        } else if (raw == List.class) {
            assertThat(schema.getType()).as(where).isEqualTo("array");
            assertMatches(schema.getItems(), ((ParameterizedType) type).getActualTypeArguments()[0], where + "[]");
        } else {
            assertThat(schema.getType() + " " + schema.getFormat()).as("%s (%s)", where, raw.getSimpleName()).isIn(scalar(raw));
        }
    }

    /** The JSON type and format that describe a scalar Java type. */
    private static List<String> scalar(Class<?> type) {
        return switch (type.getName()) {
            case "java.lang.String" -> List.of("string null");
            case "boolean", "java.lang.Boolean" -> List.of("boolean null");
            case "int", "java.lang.Integer" -> List.of("integer null", "integer int32");
            case "long", "java.lang.Long" -> List.of("integer int64");
            case "double", "java.lang.Double" -> List.of("number double");
            default -> fail("no JSON type known for " + type + ": teach OpenApiDescriptionTest.scalar");
        };
    }

    /** "METHOD path" of every operation the description has. */
    private static Map<String, Operation> documentedOperations() {
        Map<String, Operation> operations = new TreeMap<>();
        description.getPaths().forEach((path, item) ->
                item.readOperationsMap().forEach((method, operation) -> operations.put(method.name() + " " + path, operation)));
        return operations;
    }

    private static Parameter resolve(Parameter parameter) {
        return parameter.get$ref() == null ? parameter : description.getComponents().getParameters().get(refName(parameter.get$ref()));
    }

    private static ApiResponse resolve(ApiResponse response) {
        return response.get$ref() == null ? response : description.getComponents().getResponses().get(refName(response.get$ref()));
    }

    /** The schema itself, through a $ref or a single allOf (how a nullable reference is written in OpenAPI 3.0). */
    private static Schema<?> resolve(Schema<?> schema) {
        if (schema.get$ref() != null) {
            return resolve(description.getComponents().getSchemas().get(refName(schema.get$ref())));
        }
        if (schema.getAllOf() != null && schema.getAllOf().size() == 1) {
            return resolve(schema.getAllOf().get(0));
        }
        return schema;
    }

    private static String refName(String ref) {
        return ref.substring(ref.lastIndexOf('/') + 1);
    }

    /**
     * The status codes code answers with, read from its source: every {@code HttpStatus.X} it
     * names, and the ServerResponse shortcuts it calls ({@code ok()}, {@code notFound()}, ...).
     */
    static final class StatusCodes {

        private static final Pattern NAMED = Pattern.compile("\\bHttpStatus\\.([A-Z_]+)\\b");
        private static final Pattern SHORTCUT = Pattern.compile("\\bServerResponse\\s*\\.\\s*([a-z]\\w*)\\s*\\(");
        private static final Map<String, HttpStatus> SHORTCUTS = Map.of("ok", HttpStatus.OK, "created", HttpStatus.CREATED,
                "accepted", HttpStatus.ACCEPTED, "noContent", HttpStatus.NO_CONTENT, "seeOther", HttpStatus.SEE_OTHER,
                "temporaryRedirect", HttpStatus.TEMPORARY_REDIRECT, "permanentRedirect", HttpStatus.PERMANENT_REDIRECT,
                "badRequest", HttpStatus.BAD_REQUEST, "notFound", HttpStatus.NOT_FOUND,
                "unprocessableEntity", HttpStatus.UNPROCESSABLE_CONTENT);
        /** Shortcuts whose status is given (and so named elsewhere in the source) or copied. */
        private static final Set<String> GIVEN = Set.of("status", "from");

        static Set<Integer> answeredIn(Path sources) throws IOException {
            Set<Integer> codes = new TreeSet<>();
            try (Stream<Path> files = Files.list(sources)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    String source = Files.readString(file);
                    for (Matcher named = NAMED.matcher(source); named.find(); ) {
                        codes.add(HttpStatus.valueOf(named.group(1)).value());
                    }
                    for (Matcher shortcut = SHORTCUT.matcher(source); shortcut.find(); ) {
                        String name = shortcut.group(1);
                        if (!GIVEN.contains(name)) {
                            assertThat(SHORTCUTS).as("ServerResponse.%s() in %s: add its status to StatusCodes", name, file)
                                    .containsKey(name);
                            codes.add(SHORTCUTS.get(name).value());
                        }
                    }
                }
            }
            assertThat(codes).as("status codes found in " + sources).isNotEmpty();
            return codes;
        }
    }
}
