package io.ringkv.support;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for what tests start (nodes, the S3 server): free a moment ago, below the kernel's
 * ephemeral range, and in this test JVM's own share of it. Surefire runs test JVMs side by side
 * (service/pom.xml), each told its number ({@code ringkv.test.fork}, 1 to {@code ringkv.test.forks}):
 * two JVMs that found the same port free at once both started on it, and the slower start failed
 * with "Port ... is already in use" (SlowClientTest, once in a CI run).
 */
public final class TestPorts {

    /** The lowest port tests are given; the ones below the kernel's ephemeral range are never an outgoing connection's. */
    private static final int LOWEST_PORT = 10_000;

    private TestPorts() {
    }

    /** {@code count} different ports, each free a moment ago. */
    public static List<Integer> free(int count) {
        int[] share = share();
        List<Integer> ports = new ArrayList<>();
        while (ports.size() < count) {
            int port = ThreadLocalRandom.current().nextInt(share[0], share[1]);
            if (!ports.contains(port) && isFree(port)) {
                ports.add(port);
            }
        }
        return ports;
    }

    /** The first of {@code count} consecutive ports, all free a moment ago. */
    public static int consecutive(int count) {
        int[] share = share();
        for (int attempt = 0; attempt < 100; attempt++) {
            int first = ThreadLocalRandom.current().nextInt(share[0], share[1] - count);
            boolean free = true;
            for (int port = first; free && port < first + count; port++) {
                free = isFree(port);
            }
            if (free) {
                return first;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free ports in " + share[0] + "-" + share[1]);
    }

    /** This JVM's ports, [from, to): its slice of the range, or all of it when run alone (an IDE). */
    private static int[] share() {
        int forks = Integer.getInteger("ringkv.test.forks", 1);
        int fork = Integer.getInteger("ringkv.test.fork", 1);
        if (forks < 1 || fork < 1 || fork > forks) {
            throw new IllegalStateException("ringkv.test.fork " + fork + " of ringkv.test.forks " + forks);
        }
        int slice = (ephemeralPortsFrom() - LOWEST_PORT) / forks;
        int from = LOWEST_PORT + (fork - 1) * slice;
        return new int[] {from, from + slice};
    }

    /**
     * The first port of the kernel's ephemeral range. Tests restart nodes on their old ports, and
     * an ephemeral port may meanwhile have become the local end of some outgoing connection:
     * NodeFailureTest failed now and then with "Port ... is already in use".
     */
    private static int ephemeralPortsFrom() {
        try {
            // By lines: Files.readString read "3" of "32768	60999" from this file, whose size procfs
            // reports as 0, which left every test JVM the 1,000 ports from LOWEST_PORT to share.
            String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).getFirst().trim();
            return Math.max(LOWEST_PORT + 1_000, Integer.parseInt(range.split("\\s+")[0]));
        } catch (IOException | RuntimeException e) {
            return 32_768; // Linux's default
        }
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
