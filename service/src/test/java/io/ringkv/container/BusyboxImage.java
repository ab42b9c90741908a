package io.ringkv.container;

import java.util.Map;

/**
 * ringkv's busybox image ({@code bin/build-busybox-image}), which {@code testcontainers.properties}
 * names as Testcontainers' "tiny image": Testcontainers runs it in some set-ups (to find the Docker
 * gateway when the tests run inside a container), and would otherwise pull {@code alpine} from a
 * registry. It must exist before Testcontainers first talks to the engine, so the container tests'
 * first Docker call ({@link RingkvImage#dockerAvailable()}) builds it, once per test JVM.
 */
final class BusyboxImage {

    private static boolean attempted;

    private BusyboxImage() {
    }

    /**
     * Builds the image unless it is there already. Without an engine the script fails at once; the
     * tests then find no engine themselves and are skipped (or fail in CI), so a failure here is
     * only reported.
     */
    static synchronized void ensureBuilt() {
        if (attempted) {
            return;
        }
        attempted = true;
        try {
            RingkvImage.runBuildScript("bin/build-busybox-image", Map.of());
        } catch (RuntimeException e) {
            System.out.println("[container tests] the busybox image could not be built: " + e.getMessage());
        }
    }
}
