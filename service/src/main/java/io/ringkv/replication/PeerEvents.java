package io.ringkv.replication;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import io.ringkv.peer.wire.PeerStatus;

/**
 * What peers tell this node in calls of their own, passed from the side that answers them
 * ({@link ReplicaService}, under the peer server) to the side that calls them
 * ({@link ReplicaDirectory}). The two cannot be given each other: the peer clients are built
 * after the peer server (they tell peers its port), which needs the service. So both are given
 * this in their constructors; the directory listens, the service publishes. Listeners run on the
 * event loop that answers the peer: they are cheap and never block.
 */
public final class PeerEvents {

    /** A member connected to this node or pinged it (a sign that it is up), telling in its ping the port it answers peers on (0: it did not). */
    public record SignOfLife(String member, int clusterPort) {
    }

    /** A member told its status in a ping of its own, heard before the answer is made. */
    public record StatusInPing(String member, PeerStatus status) {
    }

    private final List<Consumer<SignOfLife>> signOfLifeListeners = new CopyOnWriteArrayList<>();
    private final List<Consumer<StatusInPing>> statusListeners = new CopyOnWriteArrayList<>();

    public void onSignOfLife(Consumer<SignOfLife> listener) {
        signOfLifeListeners.add(listener);
    }

    public void onStatusInPing(Consumer<StatusInPing> listener) {
        statusListeners.add(listener);
    }

    void publish(SignOfLife event) {
        signOfLifeListeners.forEach(listener -> listener.accept(event));
    }

    void publish(StatusInPing event) {
        statusListeners.forEach(listener -> listener.accept(event));
    }
}
