package io.ringkv.backup;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Backups in an S3 bucket, on AWS or an S3-compatible server, under one key prefix: the object
 * {@code name} is the key {@code prefix/name}. Object names follow {@link DirectoryBackupStore}'s
 * rule, so that a backup can move between the two kinds of store.
 *
 * <p>Uploads are streamed with their length declared up front, so the SDK's client (over the
 * JDK's {@code HttpURLConnection}) holds a chunk of it in memory at a time, not the file. A stream
 * cannot be sent a second time, so {@link #put} goes through a client that does not retry: the
 * SDK's retry would fail on the spent stream and hide why the first attempt failed. The caller
 * puts the file again.
 *
 * <p>Checksums are sent and checked only where S3 requires them: many S3-compatible servers do
 * not understand the trailing checksums the SDK sends by default.
 */
public final class S3BackupStore implements BackupStore {

    /** The most keys a ListObjectsV2 page or a DeleteObjects request takes. */
    static final int MAX_KEYS = 1000;
    /** S3-compatible servers ignore the region; the signature still needs one. */
    private static final Region ANY_REGION = Region.US_EAST_1;

    private final S3Client s3;
    /** For streamed uploads: without retries. */
    private final S3Client once;
    private final DefaultCredentialsProvider credentials;
    private final String bucket;
    /** Empty, or ends with {@code /}. */
    private final String prefix;
    private final String description;
    private final int pageSize;

    private S3BackupStore(S3Client s3, S3Client once, DefaultCredentialsProvider credentials, String bucket, String prefix,
            String description, int pageSize) {
        this.s3 = s3;
        this.once = once;
        this.credentials = credentials;
        this.bucket = bucket;
        this.prefix = prefix;
        this.description = description;
        this.pageSize = pageSize;
    }

    /**
     * @param target   {@code s3://bucket} or {@code s3://bucket/prefix}
     * @param endpoint an S3-compatible server, such as {@code http://127.0.0.1:8333}, addressed
     *                 path-style (its buckets need no DNS names); null for AWS
     * @param region   null for the SDK's own look-up ({@code AWS_REGION}, the profile) on AWS, and
     *                 for any region on another server
     */
    public static S3BackupStore open(URI target, URI endpoint, String region) {
        return open(target, endpoint, region, MAX_KEYS);
    }

    /** With listings read {@code pageSize} keys at a time: tests see the paging without 1000 objects. */
    static S3BackupStore open(URI target, URI endpoint, String region, int pageSize) {
        if (!"s3".equalsIgnoreCase(target.getScheme()) || target.getRawAuthority() == null || target.getRawUserInfo() != null
                || target.getPort() != -1 || target.getRawQuery() != null || target.getRawFragment() != null) {
            String shown = target.getRawUserInfo() == null ? target.toString() : target.toString().replace(target.getRawUserInfo() + "@", "");
            throw new IllegalArgumentException("not an s3://bucket/prefix URI without user info, query or fragment: " + shown);
        }
        String bucket = target.getAuthority();
        String path = stripSlashes(target.getPath() == null ? "" : target.getPath());
        String prefix = path.isEmpty() ? "" : DirectoryBackupStore.checkName(path) + "/";
        String description = "s3://" + bucket + (path.isEmpty() ? "" : "/" + path)
                + (endpoint == null ? "" : " (endpoint " + withoutUserInfo(endpoint) + ")");
        DefaultCredentialsProvider credentials = DefaultCredentialsProvider.builder().build();
        S3Client s3 = null;
        try {
            s3 = client(endpoint, region, credentials, true);
            S3Client once = client(endpoint, region, credentials, false);
            return new S3BackupStore(s3, once, credentials, bucket, prefix, description, pageSize);
        } catch (SdkClientException e) {
            if (s3 != null) {
                s3.close();
            }
            credentials.close();
            throw new IllegalArgumentException("cannot use " + description + ": " + e.getMessage(), e);
        }
    }

    private static S3Client client(URI endpoint, String region, DefaultCredentialsProvider credentials, boolean retries) {
        S3ClientBuilder builder = S3Client.builder()
                .httpClientBuilder(UrlConnectionHttpClient.builder()
                        .connectionTimeout(Duration.ofSeconds(10))
                        .socketTimeout(Duration.ofMinutes(1)))
                .credentialsProvider(credentials)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        if (region != null) {
            builder.region(Region.of(region));
        } else if (endpoint != null) {
            builder.region(ANY_REGION);
        }
        if (endpoint != null) {
            builder.endpointOverride(endpoint).forcePathStyle(true);
        }
        if (!retries) {
            builder.overrideConfiguration(configuration -> configuration.retryStrategy(AwsRetryStrategy.doNotRetry()));
        }
        return builder.build();
    }

    private String key(String name) {
        return prefix + DirectoryBackupStore.checkName(name);
    }

    @Override
    public void put(String name, InputStream content, long bytes) throws IOException {
        String key = key(name);
        Exact exact = new Exact(content, bytes, describe(key));
        try {
            once.putObject(request -> request.bucket(bucket).key(key), RequestBody.fromInputStream(exact, bytes));
        } catch (SdkException e) {
            if (exact.ended != null) {
                throw exact.ended;
            }
            throw failure("PutObject", key, e);
        }
    }

    @Override
    public void putBytes(String name, byte[] content) throws IOException {
        String key = key(name);
        try {
            s3.putObject(request -> request.bucket(bucket).key(key), RequestBody.fromBytes(content));
        } catch (SdkException e) {
            throw failure("PutObject", key, e);
        }
    }

    @Override
    public Optional<byte[]> getBytes(String name) throws IOException {
        String key = key(name);
        try {
            return Optional.of(s3.getObjectAsBytes(request -> request.bucket(bucket).key(key)).asByteArray());
        } catch (S3Exception e) {
            if (missingKey(e)) {
                return Optional.empty();
            }
            throw failure("GetObject", key, e);
        } catch (SdkException e) {
            throw failure("GetObject", key, e);
        }
    }

    @Override
    public void download(String name, Path file) throws IOException {
        String key = key(name);
        Path target = file.toAbsolutePath();
        Path partial = DirectoryBackupStore.partialBeside(target);
        try {
            try (ResponseInputStream<GetObjectResponse> in = s3.getObject(request -> request.bucket(bucket).key(key))) {
                long copied;
                try (OutputStream out = LocalFiles.create(partial)) {
                    copied = in.transferTo(out);
                }
                Long expected = in.response().contentLength();
                if (expected != null && copied != expected) {
                    throw new IOException("GetObject of " + describe(key) + " gave " + copied + " of " + expected + " bytes");
                }
            } catch (S3Exception e) {
                if (missingKey(e)) {
                    NoSuchFileException missing = new NoSuchFileException(describe(key), null, "no such object");
                    missing.initCause(e);
                    throw missing;
                }
                throw failure("GetObject", key, e);
            } catch (SdkException e) {
                throw failure("GetObject", key, e);
            }
            DirectoryBackupStore.moveInPlace(partial, target);
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    /** NoSuchKey; some S3-compatible servers answer a bare 404 instead. */
    private static boolean missingKey(S3Exception e) {
        if (e instanceof NoSuchKeyException) {
            return true;
        }
        String code = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
        return e.statusCode() == 404 && (code == null || code.equals("NoSuchKey"));
    }

    @Override
    public List<Stored> list(String prefix) throws IOException {
        String keys = this.prefix + DirectoryBackupStore.checkPrefix(prefix);
        List<Stored> found = new ArrayList<>();
        String token = null;
        do {
            ListObjectsV2Request request = ListObjectsV2Request.builder()
                    .bucket(bucket).prefix(keys).maxKeys(pageSize).continuationToken(token).build();
            ListObjectsV2Response page;
            try {
                page = s3.listObjectsV2(request);
            } catch (SdkException e) {
                throw failure("ListObjectsV2", keys, e);
            }
            for (S3Object object : page.contents()) {
                objectName(this.prefix, object.key()).ifPresent(name -> found.add(new Stored(name, object.size())));
            }
            String next = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
            if (next != null && next.equals(token)) {
                throw new IOException("ListObjectsV2 of " + describe(keys) + " gave the same continuation token twice");
            }
            token = next;
        } while (token != null);
        // S3 orders keys by their UTF-8 bytes, and some compatible servers by path segments.
        found.sort(Comparator.comparing(Stored::name));
        return found;
    }

    /**
     * The object a listed key under {@code prefix} is, if this store could have written it: not a
     * folder marker (ending in {@code /}) that consoles and some servers create, nor a key such as
     * {@code a/../b} that whoever can write to the bucket could plant, which no caller could use and
     * retention would fail on for good.
     */
    static Optional<String> objectName(String prefix, String key) {
        return key.startsWith(prefix) ? Optional.of(key.substring(prefix.length())).filter(DirectoryBackupStore::isName) : Optional.empty();
    }

    @Override
    public void delete(List<String> names) throws IOException {
        List<ObjectIdentifier> objects = names.stream().map(name -> ObjectIdentifier.builder().key(key(name)).build()).toList();
        for (int from = 0; from < objects.size(); from += MAX_KEYS) {
            List<ObjectIdentifier> batch = objects.subList(from, Math.min(objects.size(), from + MAX_KEYS));
            DeleteObjectsResponse response;
            try {
                response = s3.deleteObjects(request -> request.bucket(bucket).delete(delete -> delete.objects(batch).quiet(true)));
            } catch (SdkException e) {
                throw failure("DeleteObjects", batch.getFirst().key(), e);
            }
            List<S3Error> errors = response.errors().stream().filter(error -> !"NoSuchKey".equals(error.code())).toList();
            if (!errors.isEmpty()) {
                S3Error first = errors.getFirst();
                throw new IOException("DeleteObjects in " + description + " failed for " + errors.size() + " of " + batch.size()
                        + " objects, the first " + first.key() + ": " + first.code() + " " + first.message());
            }
        }
    }

    private IOException failure(String operation, String key, SdkException e) {
        return new IOException(operation + " " + describe(key) + " failed: " + e.getMessage(), e);
    }

    private String describe(String key) {
        int endpoint = description.indexOf(" (endpoint ");
        return "s3://" + bucket + "/" + key + (endpoint < 0 ? "" : description.substring(endpoint));
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        s3.close();
        once.close();
        credentials.close();
    }

    private static String stripSlashes(String path) {
        int from = 0;
        int to = path.length();
        while (from < to && path.charAt(from) == '/') {
            from++;
        }
        while (to > from && path.charAt(to - 1) == '/') {
            to--;
        }
        return path.substring(from, to);
    }

    /** Messages never show credentials, not even ones written into the endpoint's URI. */
    private static String withoutUserInfo(URI endpoint) {
        try {
            return new URI(endpoint.getScheme(), null, endpoint.getHost(), endpoint.getPort(), endpoint.getPath(), null, null)
                    .toString();
        } catch (URISyntaxException e) {
            return endpoint.getScheme() + "://" + endpoint.getHost();
        }
    }

    /**
     * The first {@code bytes} bytes of the content, and an error if it has fewer: the SDK would
     * otherwise send a request that the server, or the connection, cuts short.
     */
    private static final class Exact extends FilterInputStream {
        private final String object;
        private final long bytes;
        private long left;
        /** Set when the content ended early: the failure that matters, whatever the SDK made of it. */
        IOException ended;

        Exact(InputStream content, long bytes, String object) {
            super(content);
            this.object = object;
            this.bytes = bytes;
            this.left = bytes;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (left == 0) {
                return -1;
            }
            int read = in.read(buffer, offset, (int) Math.min(length, left));
            if (read < 0) {
                ended = new IOException("the content of " + object + " ended after " + (bytes - left) + " of " + bytes + " bytes");
                throw ended;
            }
            left -= read;
            return read;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = in.skip(Math.min(n, left));
            left -= skipped;
            return skipped;
        }

        @Override
        public int available() throws IOException {
            return (int) Math.min(in.available(), left);
        }

        @Override
        public boolean markSupported() {
            return false;
        }

        @Override
        public void close() {
            // The caller's stream: the caller closes it.
        }
    }
}
