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
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringkv.peer.wire.FrameDecoder;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.peer.wire.MemberName;
import io.ringkv.peer.message.Answer;
import io.ringkv.peer.message.Exchange;
import io.ringkv.peer.message.FrameLimits;
import io.ringkv.peer.message.PeerMessage;
import io.ringkv.peer.message.PeerMessages;
import io.ringkv.peer.message.PeerService;
import io.ringkv.peer.message.Trust;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.KeyedRecord;
import io.ringkv.record.RecordBatch;
import io.ringkv.storage.RecordCursor;
import io.ringkv.storage.StorageException;
import io.ringkv.storage.StorageOverloadedException;
import reactor.core.scheduler.Scheduler;

/**
 * One peer's connection to this node: the handshake first, then its requests, each served by its
 * unit of {@link PeerMessages} ({@link Exchange} is what a unit sees of the connection) and answered
 * under the request's id as soon as its storage work is done, in whatever order that is. Runs on
 * the connection's event loop; storage work goes to the storage scheduler.
 */
final class ServerSession extends ChannelInboundHandlerAdapter implements Exchange {

    private static final Logger log = LoggerFactory.getLogger(ServerSession.class);

    private final ServerSettings settings;
    private final PeerService service;
    private final Scheduler storage;
    private final PeerLoad load;
    private final PeerConnections connections;
    private final FrameLimits limits;
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
        this.limits = new FrameLimits(settings.maxKeyLength(), settings.maxRecordLength());
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
                request(type, id, frame);
            } else {
                handshake(ctx, type, frame);
            }
        } catch (Wire.MalformedFrameException | IndexOutOfBoundsException e) {
            // The frame's boundaries are intact (it came whole off the length field): only its
            // content is wrong. Before the handshake that ends the connection; after it the request
            // is answered at once, so the caller does not wait out its timeout, and the connection goes on.
            if (authenticated) {
                log.debug("a malformed request from {}: {}", peer, e.getMessage());
                send(Answer.error(id, Wire.ErrorCode.BAD_REQUEST, "a malformed request: " + e.getMessage()));
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
            send(Answer.error(id, Wire.ErrorCode.INTERNAL, e.toString()));
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

    /** Serves the request through its unit of {@link PeerMessages}, if the unit's rule lets this peer send it. */
    private void request(byte type, int id, ByteBuf payload) {
        Optional<PeerMessage> message = PeerMessages.of(type);
        if (message.isEmpty()) {
            send(Answer.error(id, Wire.ErrorCode.UNKNOWN_MESSAGE, "message type " + type + " is not in protocol version " + Wire.VERSION));
            return;
        }
        Trust.Decision decision = message.get().trust().decide(service.isMember(peerName));
        if (decision == Trust.Decision.REFUSE) {
            log.debug("refused a request of type {} from {}: not a member of this node's ring", type, peer);
            send(Answer.error(id, Wire.ErrorCode.BAD_REQUEST, peerName + " is not a member of " + service.name() + "'s ring"));
            return;
        }
        message.get().serve(this, id, payload, decision);
    }

    @Override
    public PeerService service() {
        return service;
    }

    @Override
    public String peerName() {
        return peerName;
    }

    @Override
    public FrameLimits limits() {
        return limits;
    }

    @Override
    public boolean refusedAsTooMany(int id, long[] bounds, String request) {
        if (bounds.length / 2 <= ServerSettings.MAX_INTERVALS) {
            return false;
        }
        send(Answer.error(id, Wire.ErrorCode.BAD_REQUEST, bounds.length / 2 + " intervals in one " + request + " (at most "
                + ServerSettings.MAX_INTERVALS + ")"));
        return true;
    }

    @Override
    public void credit(int id, int bytes) {
        ServerScan scan = scans.get(id);
        if (scan != null) {
            scan.credit(bytes);
        }
    }

    @Override
    public void cancel(int id) {
        ServerScan scan = scans.remove(id);
        if (scan != null) {
            scan.cancel();
        }
    }

    @Override
    public boolean tryHold(long bytes) {
        return load.tryHold(bytes);
    }

    /**
     * Runs a request's storage work on the storage scheduler and answers with what it returns, or
     * with an error. Counted in flight: past the bound, this connection is read no further until
     * enough requests are done ({@link PeerServer#started}); refused only when the storage queue is full.
     */
    @Override
    public void onStorage(int id, Supplier<Answer> work) {
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
            send(Answer.error(id, Wire.ErrorCode.OVERLOADED, "storage queue full"));
        }
    }

    /** Starts a stream under the request's id; its cursor is opened on a storage thread. */
    @Override
    public void stream(int id, Supplier<RecordCursor> open, int credit, LongFunction<Duration> pace) {
        if (scans.containsKey(id)) {
            send(Answer.error(id, Wire.ErrorCode.BAD_REQUEST, "range stream " + id + " is open already"));
        } else if (scans.size() >= Wire.MAX_STREAMS_PER_CONNECTION) {
            send(Answer.error(id, Wire.ErrorCode.BAD_REQUEST, "more than " + Wire.MAX_STREAMS_PER_CONNECTION
                    + " range streams open on one connection"));
        } else {
            ServerScan scan = new ServerScan(this, id, open, credit, pace);
            scans.put(id, scan);
            scan.start();
        }
    }

    @Override
    public Answer heldWithin(int id, long bytes, Supplier<Answer> answer) {
        try {
            if (bytes > 0 && !load.holdWithin(bytes, settings.readWait())) {
                return noRoomForBytes(id);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Answer.error(id, Wire.ErrorCode.OVERLOADED, "interrupted while waiting for room");
        }
        return answer.get();
    }

    /**
     * Queues the writes for the store's writer and answers once all are stored (or one failed).
     * Its frame is here already, so it is taken whatever the bounds: past them, this connection is
     * read no further until enough requests are done, and the peer waits rather than fails.
     */
    @Override
    public void write(int id, List<KeyedRecord> records) {
        long held = RecordBatch.valueBytes(records);
        load.started(channel, held);
        stored(records).whenComplete((stored, failure) -> {
            load.ended(held);
            send(failure == null ? Answer.done(id) : failed(id, failure));
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
            return Answer.error(id, Wire.ErrorCode.OVERLOADED, cause.getMessage());
        }
        if (cause instanceof StorageException) {
            return Answer.error(id, Wire.ErrorCode.STORAGE, cause.getMessage());
        }
        if (cause instanceof IllegalArgumentException) {
            return Answer.error(id, Wire.ErrorCode.BAD_REQUEST, String.valueOf(cause.getMessage()));
        }
        log.warn("a request from {} failed", peer, cause);
        return Answer.error(id, Wire.ErrorCode.INTERNAL, cause.toString());
    }

    /** No room in the peers' byte bound for a read's answer, within the read wait. */
    private static Answer noRoomForBytes(int id) {
        return Answer.error(id, Wire.ErrorCode.OVERLOADED, "too many bytes of values in progress");
    }

    /** From any thread: encodes and writes the answer on the event loop (a paced one once its delay has passed). */
    @Override
    public void send(Answer answer) {
        if (answer.delay().isPositive()) {
            channel.eventLoop().schedule(() -> write(answer), answer.delay().toNanos(), TimeUnit.NANOSECONDS);
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
