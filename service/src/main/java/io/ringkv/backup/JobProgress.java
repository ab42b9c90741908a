package io.ringkv.backup;

import java.util.function.LongSupplier;

/** A running job's counters, updated by its one thread and read by the endpoints at any time. */
final class JobProgress {

    private final String job;
    private final long startedMillis;
    private final LongSupplier clock;
    private volatile String phase;
    private volatile long finishedMillis;
    private volatile int filesTotal;
    private volatile int filesDone;
    private volatile int filesSkipped;
    private volatile long bytesTotal;
    private volatile long bytesDone;
    private volatile long records;
    private volatile String error;

    JobProgress(String job, String phase, LongSupplier clock) {
        this.job = job;
        this.phase = phase;
        this.clock = clock;
        this.startedMillis = clock.getAsLong();
    }

    String job() {
        return job;
    }

    /** Not finished yet: a second job of its kind is refused meanwhile. */
    boolean running() {
        return finishedMillis == 0;
    }

    void phase(String now) {
        phase = now;
    }

    void files(int total, long bytes) {
        filesTotal += total;
        bytesTotal += bytes;
    }

    void fileDone(long bytes, boolean skipped) {
        filesDone++;
        if (skipped) {
            filesSkipped++;
        } else {
            bytesDone += bytes;
        }
    }

    void records(long more) {
        records += more;
    }

    void finished() {
        phase = "done";
        finishedMillis = clock.getAsLong();
    }

    void failed(Throwable failure) {
        phase = "failed";
        error = failure.getMessage() == null ? failure.toString() : failure.getMessage();
        finishedMillis = clock.getAsLong();
    }

    Progress snapshot() {
        return new Progress(job, phase, startedMillis, finishedMillis, filesTotal, filesDone, filesSkipped, bytesTotal, bytesDone,
                records, error);
    }
}
