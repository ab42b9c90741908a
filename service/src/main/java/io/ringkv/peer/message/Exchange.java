package io.ringkv.peer.message;

import java.time.Duration;
import java.util.List;
import java.util.function.LongFunction;
import java.util.function.Supplier;

import io.ringkv.record.KeyedRecord;
import io.ringkv.storage.RecordCursor;

/**
 * One peer's connection as a message's server side sees it ({@link PeerMessage#serve}): what the
 * connection does for every message alike, so that a unit holds only what is its own. Called on
 * the connection's event loop; {@link #send} from any thread.
 */
public interface Exchange {

    /** The pace of a stream that is not held back: a client's range, a repair's versions. */
    LongFunction<Duration> UNPACED = bytes -> Duration.ZERO;

    PeerService service();

    /** The peer's name on the ring, as it proved it in the handshake. */
    String peerName();

    FrameLimits limits();

    /** Encodes and writes the answer on the event loop (a paced one once its delay has passed). */
    void send(Answer answer);

    /**
     * Runs a request's storage work on the storage scheduler and answers with what it returns, or
     * with an error. Counted in flight, against the bound of requests in progress.
     */
    void onStorage(int id, Supplier<Answer> work);

    /** Starts a range stream under the request's id; its cursor is opened on a storage thread. */
    void stream(int id, Supplier<RecordCursor> open, int credit, LongFunction<Duration> pace);

    /** The peer can take this many more bytes of the range stream with this id. */
    void credit(int id, int bytes);

    /** The peer wants no more of the range stream with this id. */
    void cancel(int id);

    /** Queues the writes for the store's writer and answers DONE once all are stored (or one failed). */
    void write(int id, List<KeyedRecord> records);

    /** Holds these bytes of values in the peers' bound if there is room now; false if not. */
    boolean tryHold(long bytes);

    /**
     * On a storage thread: waits up to the read wait for room for the bytes in the peers' bound,
     * then gives the answer (which must release them once written: {@link Answer#held}); refused
     * as overloaded past the wait.
     */
    Answer heldWithin(int id, long bytes, Supplier<Answer> answer);

    /** Refuses a request of more token intervals (low, high, ...) than a peer may ask for at once; true if it did. */
    boolean refusedAsTooMany(int id, long[] bounds, String request);
}
