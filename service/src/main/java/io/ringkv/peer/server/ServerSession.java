package io.ringkv.peer.server;

import java.io.IOException;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringkv.peer.wire.FrameDecoder;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.peer.wire.MemberName;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.Record;
import io.ringkv.record.RecordBatch;
import io.ringkv.ring.TokenIntervalSet;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.StorageException;
import io.ringkv.storage.StorageOverloadedException;
import reactor.core.scheduler.Scheduler;

/**
 * One peer's connection to this node: the handshake first, then its requests, each answered
 * under the request's id as soon as its storage work is done, in whatever order that is. Runs on
 * the connection's event loop; storage work goes to the storage scheduler.
 */
final class ServerSession extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(ServerSession.class);

    private final ServerSettings settings;
    private final PeerService service;
    private final Scheduler storage;
    private final PeerLoad load;
    private final PeerConnections connections;
    private final byte[] serverNonce = Handshake.nonce();
    /** Open range streams by id; touched on the event loop only. */
    private final Map<Integer, ServerScan> scans = new HashMap<>();
    private Channel channel;
    private SocketAddress remote;
    private boolean authenticated;
    /** Whether this connection was counted as refused: a connection is counted once, whatever else then fails. */
    private boolean refused;
    /** The peer's name on the ring, as it proved it in the handshake. */
    private String peerName;
    /** The peer's name and address, for the log. */
    private String peer;
    private ScheduledFuture<?> handshakeDeadline;

    /** @param storage where storage work runs, off the event loop */
    ServerSession(ServerSettings settings, PeerService service, Scheduler storage, PeerLoad load, PeerConnections connections) {
        this.settings = settings;
        this.service = service;
        this.storage = storage;
        this.load = load;
        this.connections = connections;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        remote = channel.remoteAddress();
        connections.startHandshake(this);
        ctx.writeAndFlush(Handshake.hello(ctx.alloc(), Wire.VERSION, serverNonce, settings.handshake().keyIds(serverNonce)));
        handshakeDeadline = ctx.executor().schedule(() -> {
            if (!authenticated) {
                countRefusal("no handshake within " + settings.handshakeTimeout());
                ctx.close();
            }
        }, settings.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
        // Reactor Netty reads only as fast as a subscriber of its inbound stream asks; this
        // protocol takes the frames itself, before that stream, so it reads on its own.
        ctx.channel().config().setAutoRead(true);
        ctx.read();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        ByteBuf frame = (ByteBuf) message;
        // FrameDecoder lets no frame through that is too short for these two.
        byte type = frame.readByte();
        int id = frame.readInt();
        try {
            if (authenticated) {
                request(ctx, type, id, frame);
            } else {
                handshake(ctx, type, frame);
            }
        } catch (Wire.MalformedFrameException | IndexOutOfBoundsException e) {
            // The frame's boundaries are intact (it came whole off the length field): only its
            // content is wrong. Before the handshake that ends the connection; after it the request
            // is answered at once, so the caller does not wait out its timeout, and the connection goes on.
            if (authenticated) {
                log.debug("a malformed request from {}: {}", peer, e.getMessage());
                send(error(id, Wire.ErrorCode.BAD_REQUEST, "a malformed request: " + e.getMessage()));
            } else {
                refuse(ctx, "a malformed handshake: " + e.getMessage());
            }
        } catch (RuntimeException e) {
            if (!authenticated) {
                throw e;
            }
            // A bug or a failing store behind one request fails that request, not every request
            // and range stream sharing the connection.
            log.warn("request {} (type {}) from {} failed", id, type, peer, e);
            send(error(id, Wire.ErrorCode.INTERNAL, e.toString()));
        } finally {
            frame.release();
        }
        if (!channel.isWritable()) {
            // The peer does not read its answers: read no more of its requests until it does, so
            // that answers queued for it stay within the channel's high water mark (and a batch).
            channel.config().setAutoRead(false);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable() && !ctx.channel().config().isAutoRead()) {
            ctx.channel().config().setAutoRead(true);
            ctx.read();
        }
        ctx.fireChannelWritabilityChanged();
    }

    private void handshake(ChannelHandlerContext ctx, byte type, ByteBuf payload) {
        if (type != Wire.AUTH) {
            refuse(ctx, "expected the handshake, got a frame of type " + type);
            return;
        }
        Handshake.Auth auth = Handshake.readAuth(payload);
        // Checked first: the name goes into no log line, comparison or ledger before it is a member's form.
        if (!MemberName.isValid(auth.clientName())) {
            refuse(ctx, "its name is not a member's (http(s)://host:port): " + MemberName.forLog(auth.clientName()));
            return;
        }
        Optional<Handshake.Key> key = settings.handshake().provenKey(serverNonce, auth);
        if (key.isEmpty()) {
            refuse(ctx, "it does not know the cluster secret (ringkv.cluster.secret differs)");
            return;
        }
        Predicate<String> proven = ctx.channel().attr(ProvenIdentity.NAMES).get();
        if (proven != null && !proven.test(auth.clientName())) {
            refuse(ctx, "it claims the name " + auth.clientName() + ", which its certificate is not for");
            return;
        }
        if (!connections.accepted(this, remote)) {
            return; // closed a moment ago to make room for newer connections: closing now
        }
        authenticated = true;
        peerName = auth.clientName();
        peer = peerName + " at " + remote;
        ctx.pipeline().get(FrameDecoder.class).authenticated();
        handshakeDeadline.cancel(false);
        int version = Math.min(auth.version(), Wire.VERSION);
        String self = service.name();
        ctx.writeAndFlush(Handshake.welcome(ctx.alloc(), version,
                settings.handshake().serverProof(key.get(), auth.clientNonce(), serverNonce, self), self));
        log.debug("peer {} connected, protocol version {}", peer, version);
        if (service.isMember(peerName)) {
            service.heardFrom(peerName, 0);
        }
    }

    private void refuse(ChannelHandlerContext ctx, String reason) {
        countRefusal(reason);
        ctx.writeAndFlush(Handshake.refused(ctx.alloc(), reason)).addListener(ChannelFutureListener.CLOSE);
    }

    private void request(ChannelHandlerContext ctx, byte type, int id, ByteBuf payload) {
        PeerTrust.Decision trust = PeerTrust.decide(type, service.isMember(peerName));
        if (trust == PeerTrust.Decision.REFUSE) {
            log.debug("refused a request of type {} from {}: not a member of this node's ring", type, peer);
            send(error(id, Wire.ErrorCode.BAD_REQUEST, peerName + " is not a member of " + service.name() + "'s ring"));
            return;
        }
        int maxKey = settings.maxKeyLength();
        switch (type) {
            case Wire.READ -> {
                byte[] key = Wire.readKey(payload, maxKey);
                // In memory (most reads of a working set that fits the cache): answered right here.
                var cached = service.readIfCached(key);
                if (cached.known() && (cached.found().isEmpty() || load.tryHold(size(cached.found())))) {
                    send(found(id, cached.found()));
                } else {
                    // Not in memory, or no room for its bytes now: read on a storage thread, which
                    // may wait for room. Read again there rather than queue the value: a queue of
                    // values waiting is what the bound is for.
                    onStorage(id, () -> foundWithin(id, service.read(key)));
                }
            }
            case Wire.WRITE -> {
                byte[] key = Wire.readKey(payload, maxKey);
                var record = Wire.readRecord(payload, settings.maxRecordLength());
                write(id, List.of(new KeyedRecord(key, record)));
            }
            case Wire.WRITE_BATCH -> write(id, Wire.readRecords(payload, maxKey, settings.maxRecordLength()));
            case Wire.READ_BATCH -> {
                List<byte[]> keys = Wire.readKeys(payload, maxKey);
                onStorage(id, () -> readAll(id, keys));
            }
            case Wire.PING -> {
                PeerStatus told = Wire.readStatus(payload);
                int clusterPort = Wire.readClusterPort(payload);
                if (trust == PeerTrust.Decision.SERVE) {
                    // Before the answer: a restarted node counts this one told once it is answered.
                    service.heardFrom(peerName, clusterPort);
                } else {
                    told = PeerStatus.UNKNOWN;
                }
                PeerStatus status = service.status(peerName, told);
                send(allocator -> Wire.seal(Wire.writeStatus(Wire.begin(allocator, Wire.DONE, id, PeerStatus.WIRE_BYTES), status)));
            }
            case Wire.SCAN -> {
                byte[] start = Wire.readKey(payload, maxKey);
                byte[] end = payload.readBoolean() ? Wire.readKey(payload, maxKey) : null;
                stream(id, () -> service.openRange(start, end), payload.readInt(), ServerScan.UNPACED);
            }
            case Wire.REPAIRED -> {
                long startedMillis = payload.readLong();
                if (service.repaired(peerName, startedMillis)) {
                    send(allocator -> Wire.empty(allocator, Wire.DONE, id));
                } else {
                    send(error(id, Wire.ErrorCode.BAD_REQUEST, "a repair that started at " + startedMillis
                            + " ms, later than this node's clock allows"));
                }
            }
            case Wire.SNAPSHOT -> {
                String backup = Wire.readText(payload);
                onStorage(id, () -> service.snapshot(peerName, backup)
                        .<Answer>map(refusal -> error(id, Wire.ErrorCode.BAD_REQUEST, refusal))
                        .orElse(allocator -> Wire.empty(allocator, Wire.DONE, id)));
            }
            case Wire.TOKEN_SCAN -> {
                long low = payload.readLong();
                long high = payload.readLong();
                stream(id, () -> service.openTokenRange(low, high), payload.readInt(), ServerScan.UNPACED);
            }
            case Wire.RECORD_SCAN -> {
                int credit = payload.readInt();
                long[] bounds = Wire.readPairs(payload);
                if (refusedAsTooMany(id, bounds, "record scan")) {
                    return;
                }
                TokenIntervalSet intervals;
                try {
                    intervals = TokenIntervalSet.of(bounds);
                } catch (IllegalArgumentException e) {
                    send(error(id, Wire.ErrorCode.BAD_REQUEST, e.getMessage()));
                    return;
                }
                // Paced like READ_BATCH's answers: the transfer a rebuild pulls yields to this node's clients.
                stream(id, () -> service.openTokenIntervals(intervals), credit, service::paceTransfer);
            }
            case Wire.DIGEST -> {
                long[] intervals = Wire.readPairs(payload);
                if (refusedAsTooMany(id, intervals, "digest request")) {
                    return;
                }
                onStorage(id, () -> {
                    long[] digests = service.digest(intervals);
                    return allocator -> Wire.digests(allocator, id, digests);
                });
            }
            case Wire.CREDIT -> {
                ServerScan scan = scans.get(id);
                if (scan != null) {
                    scan.credit(payload.readInt());
                }
            }
            case Wire.CANCEL -> {
                ServerScan scan = scans.remove(id);
                if (scan != null) {
                    scan.cancel();
                }
            }
            default -> send(error(id, Wire.ErrorCode.UNKNOWN_MESSAGE,
                    "message type " + type + " is not in protocol version " + Wire.VERSION));
        }
    }

    /** Refuses a request of more than {@link ServerSettings#MAX_INTERVALS} token intervals; true if it did. */
    private boolean refusedAsTooMany(int id, long[] bounds, String request) {
        if (bounds.length / 2 <= ServerSettings.MAX_INTERVALS) {
            return false;
        }
        send(error(id, Wire.ErrorCode.BAD_REQUEST, bounds.length / 2 + " intervals in one " + request + " (at most "
                + ServerSettings.MAX_INTERVALS + ")"));
        return true;
    }

    /** An answer to encode: frames are built on the event loop, whose buffer caches are its own. */
    interface Answer extends Function<ByteBufAllocator, ByteBuf> {
        /** Bytes of the peers' bound the answer holds until it is written. */
        default long heldBytes() {
            return 0;
        }
    }

    /** An answer sent once its delay has passed, on the event loop's timer; its held bytes stay held meanwhile. */
    private record PacedAnswer(Answer answer, Duration delay) implements Answer {
        @Override
        public ByteBuf apply(ByteBufAllocator allocator) {
            return answer.apply(allocator);
        }

        @Override
        public long heldBytes() {
            return answer.heldBytes();
        }
    }

    /** An answer that holds bytes of the peers' bound until its frame is written (or fails to be). */
    private record HeldAnswer(long heldBytes, Answer frame) implements Answer {
        @Override
        public ByteBuf apply(ByteBufAllocator allocator) {
            return frame.apply(allocator);
        }
    }

    /**
     * Runs a request's storage work on the storage scheduler and answers with what it returns, or
     * with an error. Counted in flight: past the bound, this connection is read no further until
     * enough requests are done ({@link PeerServer#started}); refused only when the storage queue is full.
     */
    private void onStorage(int id, Supplier<Answer> work) {
        load.started(channel, 0);
        try {
            storage.schedule(() -> {
                Answer answer;
                try {
                    answer = work.get();
                } catch (RuntimeException e) {
                    answer = failed(id, e);
                } finally {
                    load.ended(0);
                }
                send(answer);
            });
        } catch (RejectedExecutionException e) {
            load.ended(0);
            send(error(id, Wire.ErrorCode.OVERLOADED, "storage queue full"));
        }
    }

    /** Starts a stream under the request's id; its cursor is opened on a storage thread. */
    private void stream(int id, Supplier<RecordCursor> open, int credit, LongFunction<Duration> pace) {
        if (scans.containsKey(id)) {
            send(error(id, Wire.ErrorCode.BAD_REQUEST, "range stream " + id + " is open already"));
        } else if (scans.size() >= Wire.MAX_STREAMS_PER_CONNECTION) {
            send(error(id, Wire.ErrorCode.BAD_REQUEST, "more than " + Wire.MAX_STREAMS_PER_CONNECTION
                    + " range streams open on one connection"));
        } else {
            ServerScan scan = new ServerScan(this, id, open, credit, pace);
            scans.put(id, scan);
            scan.start();
        }
    }

    /**
     * The answer to a read whose value's bytes are held already: they stay held until its frame
     * is written. A burst of reads of large values would otherwise hold more of them, read and
     * framed, than the heap and the direct memory can.
     */
    private static Answer found(int id, Optional<Record> record) {
        if (record.isEmpty()) {
            return allocator -> Wire.empty(allocator, Wire.NOT_FOUND, id);
        }
        return new HeldAnswer(size(record), allocator -> Wire.record(allocator, id, record.get()));
    }

    /**
     * On a storage thread: waits up to the read wait for room for the value's bytes, so that a
     * burst of large reads is answered as room comes back rather than refused; the wait is bounded
     * by the storage threads, each holding one value. Refused as overloaded past the wait.
     */
    private Answer foundWithin(int id, Optional<Record> record) {
        return heldWithin(id, record.isPresent() ? size(record) : 0, () -> found(id, record));
    }

    /**
     * On a storage thread: a batch of the keys' records, its bytes held like a read's, and sent
     * at the pace of this node's background transfers (only repair and data movement ask for batches).
     */
    private Answer readAll(int id, List<byte[]> keys) {
        RecordBatch batch = RecordBatch.read(keys, service::read);
        long held = batch.valueBytes();
        return heldWithin(id, held, () -> new PacedAnswer(new HeldAnswer(held, allocator -> Wire.records(allocator, id, batch)),
                service.paceTransfer(RecordBatch.entrySizes(batch.found()))));
    }

    /** Waits up to the read wait for room for the bytes, then answers; refused as overloaded past the wait. */
    private Answer heldWithin(int id, long bytes, Supplier<Answer> answer) {
        try {
            if (bytes > 0 && !load.holdWithin(bytes, settings.readWait())) {
                return noRoomForBytes(id);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return error(id, Wire.ErrorCode.OVERLOADED, "interrupted while waiting for room");
        }
        return answer.get();
    }

    private static long size(Optional<Record> record) {
        return record.get().valueLength();
    }

    /**
     * Queues the writes for the store's writer and answers once all are stored (or one failed).
     * Its frame is here already, so it is taken whatever the bounds: past them, this connection is
     * read no further until enough requests are done, and the peer waits rather than fails.
     */
    private void write(int id, List<KeyedRecord> records) {
        long held = RecordBatch.valueBytes(records);
        load.started(channel, held);
        stored(records).whenComplete((stored, failure) -> {
            load.ended(held);
            send(failure == null ? allocator -> Wire.empty(allocator, Wire.DONE, id) : failed(id, failure));
        });
    }

    /** Every record handed to the store's writer at once, so that they share its batches. */
    private CompletableFuture<?> stored(List<KeyedRecord> records) {
        if (records.size() == 1) {
            return service.write(records.get(0).key(), records.get(0).record());
        }
        CompletableFuture<?>[] each = new CompletableFuture<?>[records.size()];
        for (int i = 0; i < each.length; i++) {
            each[i] = service.write(records.get(i).key(), records.get(i).record());
        }
        return CompletableFuture.allOf(each);
    }

    /** The answer to a storage failure: overloaded, the store's own trouble, or something else. */
    private Answer failed(int id, Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (cause instanceof StorageOverloadedException || cause instanceof RejectedExecutionException) {
            return error(id, Wire.ErrorCode.OVERLOADED, cause.getMessage());
        }
        if (cause instanceof StorageException) {
            return error(id, Wire.ErrorCode.STORAGE, cause.getMessage());
        }
        if (cause instanceof IllegalArgumentException) {
            return error(id, Wire.ErrorCode.BAD_REQUEST, String.valueOf(cause.getMessage()));
        }
        log.warn("a request from {} failed", peer, cause);
        return error(id, Wire.ErrorCode.INTERNAL, cause.toString());
    }

    /** No room in the peers' byte bound for a read's answer, within the read wait. */
    private static Answer noRoomForBytes(int id) {
        return error(id, Wire.ErrorCode.OVERLOADED, "too many bytes of values in progress");
    }

    static Answer error(int id, Wire.ErrorCode code, String message) {
        return allocator -> Wire.error(allocator, id, code, message);
    }

    /** From any thread: encodes and writes the answer on the event loop (a paced one once its delay has passed). */
    void send(Answer answer) {
        if (answer instanceof PacedAnswer paced && paced.delay().isPositive()) {
            channel.eventLoop().schedule(() -> write(answer), paced.delay().toNanos(), TimeUnit.NANOSECONDS);
        } else if (channel.eventLoop().inEventLoop()) {
            write(answer);
        } else {
            channel.eventLoop().execute(() -> write(answer));
        }
    }

    private void write(Answer answer) {
        long held = answer.heldBytes();
        if (held == 0) {
            channel.writeAndFlush(answer.apply(channel.alloc()), channel.voidPromise());
            return;
        }
        try {
            channel.writeAndFlush(answer.apply(channel.alloc())).addListener(written -> load.released(held));
        } catch (RuntimeException e) {
            load.released(held);
            throw e;
        }
    }

    Scheduler storage() {
        return storage;
    }

    /** Runs the task on the event loop once the delay has passed. */
    void after(Duration delay, Runnable task) {
        channel.eventLoop().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Runs the task on the event loop a little later: a full storage queue may have room again. */
    void later(Runnable task) {
        channel.eventLoop().schedule(task, 10, TimeUnit.MILLISECONDS);
    }

    /** From the storage thread that finished the stream. */
    void scanFinished(int id) {
        channel.eventLoop().execute(() -> scans.remove(id));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (authenticated) {
            connections.closed();
        } else {
            connections.handshakeEnded(this);
        }
        scans.values().forEach(ServerScan::cancel);
        scans.clear();
        if (handshakeDeadline != null) {
            handshakeDeadline.cancel(false);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (event instanceof ProvenIdentity.Refused refusal) {
            countRefusal(refusal.reason());
        } else {
            super.userEventTriggered(ctx, event);
        }
    }

    /**
     * From any thread: this connection, still in the handshake, is the oldest there and a new one
     * needs its slot ({@link PeerConnections#startHandshake}). Closed without a word: with TLS its
     * handshake may not be done, and a refusal written would wait for it.
     */
    void closeToMakeRoom(String reason) {
        channel.eventLoop().execute(() -> {
            countRefusal(reason);
            channel.close();
        });
    }

    /**
     * Counts and logs the connection as refused, once: closed by this node, it may then fail its
     * TLS handshake or a frame too, which is no second refusal.
     */
    private void countRefusal(String reason) {
        if (!refused) {
            refused = true;
            connections.refused(remote, reason);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof DecoderException) {
            // A frame over the limit, or one that cannot be a frame: the stream cannot be trusted.
            countRefusal("a bad frame: " + cause.getMessage());
        } else if (!(cause instanceof IOException)) {
            log.warn("closing the connection from {}", authenticated ? peer : String.valueOf(remote), cause);
        }
        ctx.close();
    }
}
