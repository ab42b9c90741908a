package io.ringkv.replication;

/**
 * The node-to-node protocol. Records travel in their storage encoding (see
 * {@link io.ringkv.storage.RecordCodec}), ranges as {@link RecordFrames}; the version in the path
 * lets a later protocol (read repair, hinted handoff, Merkle-tree exchange) be served beside this one.
 */
public final class InternalApi {

    public static final String PREFIX = "/internal/";
    /** GET: 200 with the record, or 404. PUT: the record as the body; 204 once applied (or already superseded). */
    public static final String RECORD = "/internal/v0/record";
    /** GET ?start=&end=: the replica's records in the range, tombstones included, as frames. */
    public static final String RECORDS = "/internal/v0/records";
    /** GET: the node's name on the ring, as text. Discovery asks each address it finds. */
    public static final String IDENTITY = "/internal/v0/identity";
    /** Carries the shared cluster secret on every internal call. */
    public static final String SECRET_HEADER = "X-Ringkv-Cluster-Secret";

    private InternalApi() {
    }
}
