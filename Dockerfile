# ringkv container image.
#
# Expects the Spring Boot jar to be built beforehand (this file does not run
# Maven):   bin/with-jdk ./mvnw -B -DskipTests package
# Then:     bin/build-image           (or: docker build -t ringkv:dev .)
#
# JRE_IMAGE defaults to the public Temurin image; offline builds pass the
# locally built stand-in: --build-arg JRE_IMAGE=ringkv-base/temurin-jre:25
# (bin/build-image does this). Both provide java at /opt/java/openjdk/bin,
# on PATH, and useradd/groupadd.
ARG JRE_IMAGE=eclipse-temurin:25-jre

# ---------------------------------------------------------------------------
# Stage 1: split the uber jar into Spring Boot's four layers, as a thin
# ringkv.jar whose manifest lists its libraries in lib/: started with
# java -jar, its classes come from the JVM's own class loader, which the
# ahead-of-time cache below needs (it cannot cache classes that Spring Boot's
# launcher loads from nested jars).
# ---------------------------------------------------------------------------
FROM ${JRE_IMAGE} AS extract
WORKDIR /build
COPY service/target/ringkv.jar ringkv.jar
RUN java -Djarmode=tools -jar ringkv.jar extract --layers --destination extracted

# ---------------------------------------------------------------------------
# Stage 2: the runtime image.
# ---------------------------------------------------------------------------
FROM ${JRE_IMAGE}

# A fixed, numeric non-root user (Kubernetes' runAsNonRoot can verify a
# numeric USER). The data directory is created and chowned *before* VOLUME,
# so that new volumes start out owned by that user.
RUN groupadd --gid 10001 ringkv \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin ringkv \
 && mkdir -p /var/lib/ringkv \
 && chown 10001:10001 /var/lib/ringkv \
 && chmod 0750 /var/lib/ringkv

LABEL org.opencontainers.image.title="ringkv" \
      org.opencontainers.image.description="ringkv distributed key-value store node"

WORKDIR /app

# Least to most frequently changing, so that a code change rebuilds (and a
# registry/cluster re-pulls) only the last, small layer.
COPY --from=extract /build/extracted/dependencies/ ./
COPY --from=extract /build/extracted/spring-boot-loader/ ./
COPY --from=extract /build/extracted/snapshot-dependencies/ ./
COPY --from=extract /build/extracted/application/ ./

# Ahead-of-time cache (JDK 25, JEP 483/514/515): a training run starts three
# nodes in one JVM as the chart runs them (TLS on every port, tokens required;
# a throwaway CA and token made with keytool, which the runtime image keeps),
# sends them every kind of request, and the JVM writes the
# classes it loaded and linked, and the profiles of the methods it ran, to
# /app/ringkv.aot. A node started with the cache (see ENTRYPOINT) is ready
# sooner and compiles its hot paths from those profiles at once instead of
# learning them under live traffic. The flags that shape the cache are the
# ENTRYPOINT's, so that it matches; a cache that does not match is ignored
# with a warning, never an error.
RUN java -XX:AOTCacheOutput=/app/ringkv.aot -Dringkv.aot-training=true \
         -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Djava.io.tmpdir=/tmp \
         --enable-native-access=ALL-UNNAMED -jar /app/ringkv.jar \
 && rm -rf /tmp/*

ENV RINGKV_DATA_DIR=/var/lib/ringkv
# Peers call each other on a fixed port of its own (the node-to-node protocol), which the
# Kubernetes Service and NetworkPolicy name; outside a container a node may take a free one.
ENV RINGKV_CLUSTER_PORT=7070
# Actuator (probes, metrics) on a port of its own, apart from client traffic.
ENV MANAGEMENT_SERVER_PORT=9090

# JVM flags meant to be tuned per deployment. JAVA_TOOL_OPTIONS is read by
# the JVM itself (java is started without a shell, see ENTRYPOINT). To change
# them, either replace JAVA_TOOL_OPTIONS, or add flags in JDK_JAVA_OPTIONS,
# which the JVM reads later and which therefore wins: e.g.
# JDK_JAVA_OPTIONS="-Xmx2g" (an explicit -Xmx always beats MaxRAMPercentage).
#
# The heap's share of the container's memory limit is the chart's
# jvm.heapPercent (helm/ringkv/values.yaml decides; helm/verify.sh fails when
# this differs): RocksDB's block cache and memtables, Netty's direct buffers,
# metaspace and thread stacks all live outside it. Direct memory has no
# percentage flag, so here it is the JVM's default, as much as the heap; the
# chart (and k8s/) replace these options with -Xmx and
# -XX:MaxDirectMemorySize computed from the limit.
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=33.0"

# glibc's malloc keeps up to 8 arenas per core, and RocksDB's allocations
# spread over them and stay resident: two arenas hold the native memory of a
# node writing and reading 4 MiB values to what it uses (measured in
# service/.../LargeValuesMemoryIT: one node peaked at 650 MiB resident without
# this and a direct-memory cap, at 587-635 MiB with both).
ENV MALLOC_ARENA_MAX=2

# Data (RocksDB) and scratch space. RocksDB's JNI loader extracts its .so
# into java.io.tmpdir, so /tmp must be writable and *executable* when the
# root fs is read-only (a volume is; Docker's --tmpfs defaults to noexec,
# so use --tmpfs /tmp:exec there; in Kubernetes mount an emptyDir).
VOLUME ["/var/lib/ringkv", "/tmp"]

# 8080: the key-value API; 7070: the node-to-node protocol; 9090: management (Actuator health, metrics).
EXPOSE 8080 7070 9090

USER 10001:10001

# Exec form: java is PID 1 and gets `docker stop`'s SIGTERM directly, which
# triggers Spring's graceful shutdown.
#   -XX:AOTCache                  the ahead-of-time cache trained above
#   -XX:+UseG1GC                  chosen, not left to the JVM: it would pick the
#                                 serial collector in a container under 1792 MiB
#                                 (and then the cache, made with G1, would not match)
#   -XX:+ExitOnOutOfMemoryError   die (and get restarted) instead of limping on
#   --enable-native-access        RocksDB loads its JNI library with
#                                 System.loadLibrary; since JDK 24 that prints
#                                 a warning (and will later be blocked) unless
#                                 native access is enabled
ENTRYPOINT ["java", \
            "-XX:AOTCache=/app/ringkv.aot", \
            "-XX:+UseG1GC", \
            "-XX:+ExitOnOutOfMemoryError", \
            "-Djava.io.tmpdir=/tmp", \
            "--enable-native-access=ALL-UNNAMED", \
            "-jar", "/app/ringkv.jar"]
