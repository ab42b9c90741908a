package io.ringkv.peer.client;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.ScheduledFuture;
import io.ringkv.peer.message.Cancel;
import io.ringkv.peer.message.Credit;
import io.ringkv.peer.message.FrameLimits;
import io.ringkv.peer.message.PeerCall;
import io.ringkv.peer.message.Ping;
import io.ringkv.peer.message.RangeRequest;
import io.ringkv.peer.wire.FrameDecoder;
import io.ringkv.peer.wire.Handshake;
import io.ringkv.peer.wire.PeerException;
import io.ringkv.peer.wire.PeerStatus;
import io.ringkv.peer.wire.Wire;
import io.ringkv.record.KeyedRecord;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;

/**
 * This node's end of one connection to a peer: it answers the peer's handshake, then carries any
 * number of requests at once, each under an id of its own, and hands every answer to the request
 * with its id. Requests may be sent from any thread; answers arrive on the connection's event loop.
 *
 * <p>Every request has a deadline (the timeout; {@value #RANGE_WORK_TIMEOUTS} of them for the calls
 * of repair and data movement, which work over ranges); one that passes fails that request alone
 * ({@link PeerException.TimedOut}). If nothing at all came back on the connection since the request
 * was sent, the peer may hang, or have stopped in the middle of a frame: the connection pings it,
 * and if the ping gets no answer within the timeout either, the connection is closed, failing what
 * else waits on it, and the next request opens a new one. A peer that is only busy answers the
 * ping (it needs no storage) and keeps its connection and the requests under way on it: closing
 * on the first silence of a second, when every node shared one saturated disk, failed hundreds of
 * requests at once and opened every breaker.
 */
final class PeerConnection extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(PeerConnection.class);

    /**
     * How many timeouts work over a range may take while its peer still answers on the connection:
     * a range stream waiting for records, and the calls of repair and data movement (digests of
     * token intervals, batches of records). A batch read from a disk every node shares took longer
     * than one timeout: failing the stream failed its client's range (half of workload E at 10 M
     * records), and failing a digest failed a rebuilt node's whole pull, again at every retry
     * under load. A stream the peer lost must still end.
     */
    static final int RANGE_WORK_TIMEOUTS = 10;

    private final ConnectionSettings settings;
    private final FrameLimits limits;
    /** The deadline of work over a range: {@value #RANGE_WORK_TIMEOUTS} timeouts. */
    private final Duration rangeWorkTimeout;
    private final String peer;
    private final Sinks.One<PeerConnection> ready = Sinks.one();
    private final Map<Integer, PendingCall<?>> waiting = new ConcurrentHashMap<>();
    private final Map<Integer, Scan> scans = new ConcurrentHashMap<>();
    /** Streams the peer was sent and that have not ended, and those held back meanwhile; on the event loop only. */
    private int streamsOpen;
    private final ArrayDeque<Scan> streamsWaiting = new ArrayDeque<>();
    private final AtomicInteger ids = new AtomicInteger();
    private volatile Channel channel;
    private volatile boolean authenticated;
    private volatile boolean closed;
    private volatile long lastReadNanos = System.nanoTime();
    /** The handshake's nonces; the event loop only. */
    private byte[] clientNonce;
    private byte[] serverNonce;
    /** The key the server accepts, which its proof must be made with too; the event loop only. */
    private Handshake.Key key;
    private ScheduledFuture<?> watchdog;
    /** A liveness ping is under way ({@link #checkLiveness}); the event loop only. */
    private boolean checkingLiveness;

    /** @param peer the peer's name on the ring: the handshake must prove that this node answers */
    PeerConnection(ConnectionSettings settings, String peer) {
        this.settings = settings;
        this.limits = new FrameLimits(settings.maxKeyLength(), settings.maxRecordLength());
        this.rangeWorkTimeout = settings.timeout().multipliedBy(RANGE_WORK_TIMEOUTS);
        this.peer = peer;
    }

    /** Completes once the handshake succeeded; fails if the peer refuses this node or is not who it should be. */
    Mono<PeerConnection> ready() {
        return ready.asMono();
    }

    boolean isOpen() {
        return authenticated && !closed;
    }

    /** The peer's port this connection reached. */
    int remotePort() {
        return channel.remoteAddress() instanceof InetSocketAddress address ? address.getPort() : 0;
    }

    /** Whether this connection runs on the calling thread's event loop, so a request costs no thread hop. */
    boolean isOnCurrentEventLoop() {
        Channel current = channel;
        return current != null && current.eventLoop().inEventLoop();
    }

    // ---- requests ----------------------------------------------------------------------------------

    /**
     * Sends the request its unit made and reads its answer the unit's way; its deadline is the
     * timeout, or {@value #RANGE_WORK_TIMEOUTS} of them for range work.
     */
    <T> Mono<T> call(PeerCall<T> call) {
        return Mono.create(sink -> request(sink, call.rangeWork() ? rangeWorkTimeout : settings.timeout(), call));
    }

    /**
     * Registers the answer's receiver before sending, so that even an immediate answer finds it,
     * then writes the request and sets its deadline on the connection's event loop: a cheap timer
     * on the thread that will see the answer.
     */
    private <T> void request(MonoSink<T> sink, Duration timeout, PeerCall<T> call) {
        if (!isOpen()) {
            sink.error(new PeerException.Unavailable(peer, "the connection is closed"));
            return;
        }
        int id = nextId();
        PendingCall<T> pending = new PendingCall<>(sink, call.answer(), limits, timeout);
        waiting.put(id, pending);
        sink.onCancel(() -> {
            if (waiting.remove(id, pending)) {
                pending.stopTimer();
            }
        });
        if (closed && waiting.remove(id, pending)) {
            // Closed between the check and the registration: channelInactive may not have seen it.
            sink.error(new PeerException.Unavailable(peer, "the connection is closed"));
            return;
        }
        onLoop(() -> {
            if (waiting.get(id) != pending) {
                return; // cancelled or failed meanwhile
            }
            pending.startTimer(channel.eventLoop().schedule(() -> expired(id, pending), timeout.toNanos(), TimeUnit.NANOSECONDS));
            channel.writeAndFlush(call.request().encode(channel.alloc(), id), channel.voidPromise());
        });
    }

    /**
     * A request got no answer within the timeout. If nothing at all was read on this connection
     * since it was sent, the peer may not answer at all, or have stalled inside a frame: check.
     */
    private void expired(int id, PendingCall<?> pending) {
        if (!waiting.remove(id, pending)) {
            return;
        }
        if (lastReadNanos - pending.sentNanos() < 0) {
            checkLiveness();
        }
        pending.fail(new PeerException.TimedOut(peer, "no answer within " + pending.timeout()));
    }

    /**
     * Pings the peer on this connection, at most one ping at a time, and closes the connection if
     * nothing at all comes back within the timeout: the peer hangs, or stopped in the middle of a
     * frame. What waits on the connection then fails as {@link PeerException.Unavailable}, which the
     * peer's breaker counts, and the next request opens a new connection. On the event loop.
     */
    private void checkLiveness() {
        if (checkingLiveness || closed) {
            return;
        }
        checkingLiveness = true;
        long sent = System.nanoTime();
        call(Ping.request(PeerStatus.UNKNOWN, settings.clusterPort())).subscribe(
                answer -> checkingLiveness = false,
                error -> {
                    checkingLiveness = false;
                    if (lastReadNanos - sent < 0 && !closed) {
                        log.info("closing the connection to {}: neither a request nor a ping came back within {}",
                                peer, settings.timeout());
                        close();
                    }
                });
    }

    private int nextId() {
        // Ids wrap around; 0 is the handshake's.
        int id;
        do {
            id = ids.incrementAndGet();
        } while (id == 0);
        return id;
    }

    /**
     * A range stream its unit opens, with credit-based flow control: the peer sends at most
     * {@code window} bytes of records ahead of what this side has taken, so a slow consumer never
     * makes either side buffer more than that.
     */
    Flux<KeyedRecord> stream(RangeRequest request) {
        IntFunction<ByteBuf> opening = id -> request.open(channel.alloc(), id, settings.scanWindow());
        return Flux.create(sink -> {
            if (!isOpen()) {
                sink.error(new PeerException.Unavailable(peer, "the connection is closed"));
                return;
            }
            int id = nextId();
            Scan scan = new Scan(id, sink, opening);
            scans.put(id, scan);
            if (closed && scans.remove(id) != null) {
                sink.error(new PeerException.Unavailable(peer, "the connection is closed"));
                return;
            }
            sink.onRequest(ignored -> onLoop(scan::drain));
            sink.onCancel(() -> onLoop(scan::cancel));
            onLoop(() -> open(scan));
        }, FluxSink.OverflowStrategy.ERROR);
    }

    /**
     * Sends the stream's opening, or holds it back while {@link Wire#MAX_STREAMS_PER_CONNECTION}
     * streams are open on this connection (the peer would refuse it) until one ends.
     */
    private void open(Scan scan) {
        if (scan.finished) {
            return; // cancelled or failed while it waited
        }
        if (streamsOpen < Wire.MAX_STREAMS_PER_CONNECTION) {
            streamsOpen++;
            scan.send();
        } else {
            streamsWaiting.add(scan);
        }
    }

    /** A stream the peer was sent has ended: the next one waiting (and not cancelled meanwhile) goes out. */
    private void streamEnded() {
        streamsOpen--;
        Scan next;
        do {
            next = streamsWaiting.poll();
        } while (next != null && next.finished);
        if (next != null) {
            open(next);
        }
    }

    /** Frames are built and written on the connection's event loop only: its buffer caches are its own. */
    private void onLoop(Runnable task) {
        if (channel.eventLoop().inEventLoop()) {
            task.run();
        } else {
            channel.eventLoop().execute(task);
        }
    }

    /** One range stream; every method runs on the connection's event loop. */
    private final class Scan {
        private final int id;
        private final FluxSink<KeyedRecord> sink;
        private final IntFunction<ByteBuf> opening;
        private final ArrayDeque<Wire.Sized> queue = new ArrayDeque<>();
        /** Whether the peer was sent the opening: until then the stream waits its turn here. */
        private boolean sent;
        private boolean ended;
        private boolean finished;
        /** Bytes taken by the consumer that the peer has not been given back as credit yet. */
        private int taken;
        /** Since when the consumer waits for records that have not come (0: it does not wait). */
        private long waitingSince;
        private boolean draining;
        private boolean drainAgain;

        Scan(int id, FluxSink<KeyedRecord> sink, IntFunction<ByteBuf> opening) {
            this.id = id;
            this.sink = sink;
            this.opening = opening;
        }

        void send() {
            sent = true;
            if (waitingSince != 0) {
                waitingSince = System.nanoTime(); // its wait for the peer starts now
            }
            channel.writeAndFlush(opening.apply(id), channel.voidPromise());
        }

        void batch(ByteBuf payload) {
            queue.addAll(Wire.readBatch(payload, settings.maxKeyLength(), settings.maxRecordLength()));
            waitingSince = 0;
            drain();
        }

        void end() {
            ended = true;
            waitingSince = 0;
            drain();
        }

        void drain() {
            if (finished) {
                return;
            }
            // A consumer that asks for more from within onNext calls back in here: let the
            // outer loop do that work instead, so that demand is never counted twice.
            if (draining) {
                drainAgain = true;
                return;
            }
            draining = true;
            try {
                do {
                    drainAgain = false;
                    while (!finished && sink.requestedFromDownstream() > 0 && !queue.isEmpty()) {
                        Wire.Sized next = queue.poll();
                        taken += next.bytes();
                        sink.next(next.keyed());
                    }
                } while (drainAgain && !finished);
            } finally {
                draining = false;
            }
            if (finished) {
                return;
            }
            if (queue.isEmpty() && ended) {
                finish();
                sink.complete();
                return;
            }
            // Half the window taken: give it back, so the peer keeps sending while this side reads.
            if (taken >= settings.scanWindow() / 2) {
                channel.writeAndFlush(Credit.frame(channel.alloc(), id, taken), channel.voidPromise());
                taken = 0;
            }
            if (queue.isEmpty() && sink.requestedFromDownstream() > 0 && waitingSince == 0) {
                waitingSince = System.nanoTime();
            }
        }

        void fail(Throwable error) {
            if (!finished) {
                finish();
                sink.error(error);
            }
        }

        void cancel() {
            if (!finished) {
                // Before finish(), which may send the next stream waiting: the peer frees this one first.
                if (sent && !ended) {
                    channel.writeAndFlush(Cancel.frame(channel.alloc(), id), channel.voidPromise());
                }
                finish();
            }
        }

        /**
         * Gives the stream up, failing its consumer: cancelled first, so that the peer, which may
         * still be reading it, frees its place before the next stream waiting here takes it. (Given
         * up without a cancel, the peer counted one stream more than this side, and refused one.)
         */
        void abandon(Throwable error) {
            if (!finished) {
                cancel();
                sink.error(error);
            }
        }

        /** Waiting longer than the timeout for records the peer should be sending. */
        boolean stalled(long now, long timeoutNanos) {
            return sent && waitingSince != 0 && now - waitingSince > timeoutNanos;
        }

        private void finish() {
            finished = true;
            queue.clear();
            scans.remove(id);
            if (sent) {
                streamEnded();
            }
        }
    }

    // ---- the channel -------------------------------------------------------------------------------

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        long period = Math.max(1, settings.timeout().toMillis() / 4);
        watchdog = ctx.executor().scheduleAtFixedRate(this::checkScans, period, period, TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
        // Reactor Netty reads only as fast as a subscriber of its inbound stream asks; this
        // protocol takes the frames itself, before that stream, so it reads on its own.
        ctx.channel().config().setAutoRead(true);
        ctx.read();
    }

    /**
     * Range streams that wait longer than the timeout for records: if nothing at all came back on
     * the connection meanwhile, its liveness is checked (a hung peer's connection closes, failing
     * them). A stream whose peer answers on the connection is only slow (a disk-bound read) and
     * may wait {@value #RANGE_WORK_TIMEOUTS} timeouts before it is given up.
     */
    private void checkScans() {
        long now = System.nanoTime();
        long timeout = settings.timeout().toNanos();
        boolean stalled = false;
        for (Scan scan : List.copyOf(scans.values())) {
            if (scan.stalled(now, timeout)) {
                stalled = true;
                if (scan.stalled(now, rangeWorkTimeout.toNanos())) {
                    scan.abandon(new TimeoutException("the range stream from " + peer + " sent nothing for " + rangeWorkTimeout));
                }
            }
        }
        if (stalled && now - lastReadNanos > timeout) {
            checkLiveness();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object message) {
        ByteBuf frame = (ByteBuf) message;
        lastReadNanos = System.nanoTime();
        try {
            byte type = frame.readByte();
            int id = frame.readInt();
            if (authenticated) {
                answer(type, id, frame);
            } else {
                handshake(ctx, type, frame);
            }
        } catch (RuntimeException e) {
            // An answer this side cannot read: the peer speaks something else. Start afresh.
            log.warn("closing the connection to {}: {}", peer, e.toString());
            fail(new PeerException.Unavailable(peer, "unreadable answer: " + e.getMessage()));
            ctx.close();
        } finally {
            frame.release();
        }
    }

    private void handshake(ChannelHandlerContext ctx, byte type, ByteBuf payload) {
        switch (type) {
            case Wire.HELLO -> {
                Handshake.Hello hello = Handshake.readHello(payload);
                clientNonce = Handshake.nonce();
                key = settings.handshake().keyFor(hello);
                int version = Math.min(hello.version(), Wire.VERSION);
                byte[] proof = settings.handshake().clientProof(key, hello.serverNonce(), clientNonce, settings.self());
                ctx.writeAndFlush(Handshake.auth(ctx.alloc(), version, clientNonce, settings.self(), proof));
                serverNonce = hello.serverNonce();
            }
            case Wire.WELCOME -> {
                Handshake.Welcome welcome = Handshake.readWelcome(payload);
                byte[] expected = clientNonce == null ? null
                        : settings.handshake().serverProof(key, clientNonce, serverNonce, welcome.serverName());
                if (expected == null || !Handshake.matches(expected, welcome.proof())) {
                    refused(ctx, new PeerException.Refused(peer, "it could not prove that it knows the cluster secret"));
                } else if (!welcome.serverName().equals(peer)) {
                    refused(ctx, new PeerException.Unavailable(peer,
                            "another node answers at its address: " + welcome.serverName()));
                } else {
                    authenticated = true;
                    ctx.pipeline().get(FrameDecoder.class).authenticated();
                    ready.tryEmitValue(this);
                }
            }
            case Wire.REFUSED -> refused(ctx, new PeerException.Refused(peer, Wire.readText(payload)));
            default -> refused(ctx, new PeerException.Unavailable(peer, "not a ringkv handshake (frame type " + type + ")"));
        }
    }

    private void refused(ChannelHandlerContext ctx, PeerException error) {
        ready.tryEmitError(error);
        ctx.close();
    }

    private void answer(byte type, int id, ByteBuf payload) {
        switch (type) {
            case Wire.BATCH, Wire.END -> {
                Scan scan = scans.get(id);
                if (scan != null) {
                    if (type == Wire.BATCH) {
                        scan.batch(payload);
                    } else {
                        scan.end();
                    }
                }
            }
            default -> {
                PendingCall<?> pending = waiting.remove(id);
                if (pending != null) {
                    pending.answer(peer, type, payload);
                } else if (type == Wire.ERROR) {
                    Scan scan = scans.get(id);
                    if (scan != null) {
                        scan.fail(PeerException.from(peer, payload));
                    }
                }
            }
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        if (watchdog != null) {
            watchdog.cancel(false);
        }
        PeerException error = new PeerException.Unavailable(peer, "the connection closed");
        ready.tryEmitError(error);
        fail(error);
        ctx.fireChannelInactive();
    }

    private void fail(Throwable error) {
        for (Integer id : List.copyOf(waiting.keySet())) {
            PendingCall<?> pending = waiting.remove(id);
            if (pending != null) {
                pending.fail(error);
            }
        }
        for (Scan scan : List.copyOf(scans.values())) {
            onLoop(() -> scan.fail(error));
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof DecoderException) {
            log.warn("closing the connection to {}: {}", peer, cause.getMessage());
        } else if (!(cause instanceof IOException)) {
            log.warn("closing the connection to {}", peer, cause);
        }
        ctx.close();
    }

    void close() {
        closed = true;
        Channel current = channel;
        if (current != null) {
            current.close();
        }
    }

    @Override
    public String toString() {
        return "PeerConnection[" + peer + ", " + channel + "]";
    }
}
