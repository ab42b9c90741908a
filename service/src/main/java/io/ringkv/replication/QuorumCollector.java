package io.ringkv.replication;

import java.util.ArrayList;
import java.util.List;

/**
 * Counts the answers of the replicas of one request and says when the request is decided:
 * as soon as {@code ack} replicas succeeded, or as soon as so many failed that {@code ack} can
 * no longer be reached, or when its time is up. Later answers change nothing. Thread-safe: replicas answer on any thread.
 */
public final class QuorumCollector<T> {

    public enum Outcome { PENDING, REACHED, FAILED }

    private final int ack;
    private final int from;
    private final List<T> answers = new ArrayList<>();
    private int failures;
    private Outcome outcome = Outcome.PENDING;

    public QuorumCollector(ReplicationFactor factor) {
        this.ack = factor.ack();
        this.from = factor.from();
    }

    /**
     * Records a successful answer.
     *
     * @return {@link Outcome#REACHED} exactly once, on the answer that decides the request;
     *         {@link Outcome#PENDING} otherwise
     */
    public synchronized Outcome success(T answer) {
        if (outcome != Outcome.PENDING) {
            return Outcome.PENDING;
        }
        answers.add(answer);
        if (answers.size() >= ack) {
            outcome = Outcome.REACHED;
            return outcome;
        }
        return Outcome.PENDING;
    }

    /**
     * Records a failed or timed-out replica.
     *
     * @return {@link Outcome#FAILED} exactly once, when {@code ack} successes became impossible;
     *         {@link Outcome#PENDING} otherwise
     */
    public synchronized Outcome failure() {
        if (outcome != Outcome.PENDING) {
            return Outcome.PENDING;
        }
        failures++;
        if (from - failures < ack) {
            outcome = Outcome.FAILED;
            return outcome;
        }
        return Outcome.PENDING;
    }

    /**
     * The request's time is up.
     *
     * @return {@link Outcome#FAILED} if it was still undecided (exactly once); {@link Outcome#PENDING}
     *         if it had been decided already
     */
    public synchronized Outcome expire() {
        if (outcome != Outcome.PENDING) {
            return Outcome.PENDING;
        }
        outcome = Outcome.FAILED;
        return outcome;
    }

    /**
     * The request ended for a reason of its own (its client left, or this node refused it): later
     * answers change nothing, and its caller asks no more replicas.
     *
     * @return whether it was still undecided, so that it ends exactly once
     */
    public synchronized boolean abandon() {
        if (outcome != Outcome.PENDING) {
            return false;
        }
        outcome = Outcome.FAILED;
        return true;
    }

    /** Whether the request is decided, either way. */
    public synchronized boolean isDecided() {
        return outcome != Outcome.PENDING;
    }

    /** Whether {@code ack} replicas succeeded: only then do later answers still matter (read repair). */
    public synchronized boolean reached() {
        return outcome == Outcome.REACHED;
    }

    /** The successful answers that decided the request. */
    public synchronized List<T> answers() {
        return List.copyOf(answers);
    }
}
