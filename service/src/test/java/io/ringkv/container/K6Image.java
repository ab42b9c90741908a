package io.ringkv.container;

import java.util.Map;

/**
 * The k6 image (FROM scratch: the statically linked k6 alone, run as uid 65534 in /scripts), built
 * once per test JVM with {@code bin/build-k6-image}, which skips the build when the image is there
 * for the same binary. Scripts are copied into each container, not baked in.
 */
final class K6Image {

    private static String image;
    private static RuntimeException buildFailure;

    private K6Image() {
    }

    /** The image reference ({@code ringkv-k6:<version>}); no Docker engine: as {@link RingkvImage#name()}. */
    static synchronized String name() {
        if (image != null) {
            return image;
        }
        if (buildFailure != null) {
            throw buildFailure;
        }
        RingkvImage.requireDocker();
        try {
            image = RingkvImage.runBuildScript("bin/build-k6-image", Map.of());
            return image;
        } catch (RuntimeException e) {
            buildFailure = e;
            throw e;
        }
    }
}
