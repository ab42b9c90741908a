package io.ringkv.replication;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Flow control from this node to one replica: the calls, and the bytes of values, it has in
 * flight there are bounded. A call that finds the window full waits in line for a place instead of
 * being sent: a replica that falls behind (compacting, a slow disk, more writes than it can take)
 * then slows the nodes that call it, and, since a write is answered only once every one of its
 * replica calls has a place ({@link Coordinator}), their clients. Without it, a coordinator
 * answered after the two fastest replicas and kept sending to the third until that one refused
 * calls, its writes became hints and then a full repair.
 *
 * <p>Two lanes. Client reads and writes ({@link Lane#FOREGROUND}) take places in order of arrival,
 * up to the whole window. Hint replay, repair and data movement ({@link Lane#BACKGROUND}) yield:
 * they get a place only while less than half the window is used and no client call waits, except
 * that one background call may always be in flight, so that they never starve. A call alone
 * always gets in, however large its value.
 */
public final class ReplicaWindow {

    public enum Lane { FOREGROUND, BACKGROUND }

    private final int maxCalls;
    private final long maxBytes;
    private final ArrayDeque<Place> waitingForeground = new ArrayDeque<>();
    private final ArrayDeque<Place> waitingBackground = new ArrayDeque<>();
    private int calls;
    private int backgroundCalls;
    private long bytes;

    /**
     * @param maxCalls calls in flight at most
     * @param maxBytes bytes of values in flight at most
     */
    public ReplicaWindow(int maxCalls, long maxBytes) {
        if (maxCalls < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("a window needs room for a call and a byte");
        }
        this.maxCalls = maxCalls;
        this.maxBytes = maxBytes;
    }

    /**
     * Runs the call once it has a place in the window, and gives the place back when the call
     * ends, fails or is cancelled (a call cancelled while it waits leaves the line).
     *
     * @param size     bytes of values the call carries (0 for a read)
     * @param admitted runs once, when the call gets its place (before it is made)
     */
    public <T> Mono<T> call(long size, Lane lane, Runnable admitted, Supplier<Mono<T>> call) {
        return Mono.defer(() -> {
            Place place = new Place(size, lane);
            if (place.enterIfRoom()) {
                // Most calls find room: no waiting stage at all.
                try {
                    admitted.run();
                    return call.get().doFinally(signal -> place.leave());
                } catch (RuntimeException e) {
                    place.leave();
                    throw e;
                }
            }
            return Mono.<Boolean>create(sink -> place.enter(sink))
                    .doOnNext(ignored -> admitted.run())
                    .then(Mono.defer(call))
                    .doFinally(signal -> place.leave());
        });
    }

    /** Like {@link #call(long, Lane, Runnable, Supplier)} without the admission hook. */
    public <T> Mono<T> call(long size, Lane lane, Supplier<Mono<T>> call) {
        return call(size, lane, () -> { }, call);
    }

    /** Whether client calls wait for a place now: a read had better ask another replica. */
    public synchronized boolean saturated() {
        return !waitingForeground.isEmpty() || calls >= maxCalls;
    }

    public synchronized int callsInFlight() {
        return calls;
    }

    public synchronized long bytesInFlight() {
        return bytes;
    }

    public synchronized int waiting() {
        return waitingForeground.size() + waitingBackground.size();
    }

    private boolean fits(Place place) {
        if (place.lane == Lane.FOREGROUND) {
            return calls == 0 || (calls < maxCalls && bytes + place.size <= maxBytes);
        }
        return backgroundCalls == 0
                || (waitingForeground.isEmpty() && 2 * calls < maxCalls && 2 * (bytes + place.size) <= maxBytes);
    }

    private void take(Place place) {
        place.state = State.ADMITTED;
        calls++;
        bytes += place.size;
        if (place.lane == Lane.BACKGROUND) {
            backgroundCalls++;
        }
    }

    /** Under the lock: the places that free room now lets in, in order, client calls first. */
    private List<Place> admitWaiting() {
        List<Place> admitted = new ArrayList<>();
        for (ArrayDeque<Place> line : List.of(waitingForeground, waitingBackground)) {
            while (!line.isEmpty() && fits(line.peek())) {
                Place next = line.poll();
                take(next);
                admitted.add(next);
            }
        }
        return admitted;
    }

    private enum State { NEW, WAITING, ADMITTED, ENDED }

    /** One call's place: waiting, admitted, then ended; the window's lock guards its state. */
    private final class Place {
        private final long size;
        private final Lane lane;
        private State state = State.NEW;
        private MonoSink<Boolean> sink;

        Place(long size, Lane lane) {
            this.size = size;
            this.lane = lane;
        }

        /** Takes a place at once if there is room and nobody waits before it; false leaves it to {@link #enter}. */
        boolean enterIfRoom() {
            synchronized (ReplicaWindow.this) {
                ArrayDeque<Place> line = lane == Lane.FOREGROUND ? waitingForeground : waitingBackground;
                if (line.isEmpty() && fits(this)) {
                    take(this);
                    return true;
                }
                return false;
            }
        }

        void enter(MonoSink<Boolean> waiting) {
            boolean now;
            synchronized (ReplicaWindow.this) {
                if (state != State.NEW) {
                    return; // cancelled before it asked
                }
                sink = waiting;
                ArrayDeque<Place> line = lane == Lane.FOREGROUND ? waitingForeground : waitingBackground;
                now = line.isEmpty() && fits(this);
                if (now) {
                    take(this);
                } else {
                    state = State.WAITING;
                    line.add(this);
                }
            }
            if (now) {
                waiting.success(true);
            }
        }

        /** The call ended (or was cancelled, admitted or not): its place goes to those waiting. */
        void leave() {
            List<Place> admitted;
            synchronized (ReplicaWindow.this) {
                State before = state;
                state = State.ENDED;
                if (before == State.WAITING) {
                    (lane == Lane.FOREGROUND ? waitingForeground : waitingBackground).remove(this);
                    return;
                }
                if (before != State.ADMITTED) {
                    return;
                }
                calls--;
                bytes -= size;
                if (lane == Lane.BACKGROUND) {
                    backgroundCalls--;
                }
                admitted = admitWaiting();
            }
            // Outside the lock: each admitted call goes on to make its call, possibly right here.
            admitted.forEach(place -> place.sink.success(true));
        }
    }
}
