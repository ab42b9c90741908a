package io.ringkv.replication;

/**
 * How many replicas hold a key ({@code from}) and how many must answer before the coordinator
 * answers the client ({@code ack}), as in the request parameter {@code replicas=ack/from}.
 */
public record ReplicationFactor(int ack, int from) {

    public ReplicationFactor {
        if (ack < 1 || ack > from) {
            throw new IllegalArgumentException("replicas: need 1 <= ack <= from, got " + ack + "/" + from);
        }
    }

    /** Quorum: a majority of {@code from} replicas must answer. */
    public static ReplicationFactor quorumOf(int from) {
        return new ReplicationFactor(from / 2 + 1, from);
    }

    /**
     * Parses {@code ack/from}; null or empty means the default: {@code from} is the replication
     * factor (or every node, if there are fewer), {@code ack} a majority of them.
     *
     * @throws IllegalArgumentException with a message fit for the client
     */
    public static ReplicationFactor parse(String text, int clusterSize, int replicationFactor) {
        if (text == null || text.isEmpty()) {
            return quorumOf(Math.min(replicationFactor, clusterSize));
        }
        int slash = text.indexOf('/');
        if (slash < 0 || slash != text.lastIndexOf('/')) {
            throw new IllegalArgumentException("replicas must look like ack/from, for example 2/3; got '" + text + "'");
        }
        int ack = parseCount(text.substring(0, slash), text);
        int from = parseCount(text.substring(slash + 1), text);
        if (from > clusterSize) {
            throw new IllegalArgumentException(
                    "replicas: from=" + from + " is more than the " + clusterSize + " nodes of the cluster");
        }
        return new ReplicationFactor(ack, from);
    }

    private static int parseCount(String part, String whole) {
        // ASCII digits only: Integer.parseInt would also take other scripts' digits, such as '٣'.
        if (part.isEmpty() || part.length() > 4 || !part.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("replicas must be two whole numbers ack/from; got '" + whole + "'");
        }
        return Integer.parseInt(part);
    }

    @Override
    public String toString() {
        return ack + "/" + from;
    }
}
