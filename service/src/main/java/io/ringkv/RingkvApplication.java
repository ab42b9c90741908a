package io.ringkv;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

import io.ringkv.startup.TrainingRun;

/** A ringkv node: serves the public API, coordinates replication and stores its share of the data. */
@SpringBootApplication
public class RingkvApplication {

    /**
     * Reactor Netty 1.3.7 can stop reading a keep-alive connection when the next request arrives
     * before the previous one's operations have ended (reactor-netty issue 4361, fixed after
     * 1.3.7): peers reuse pooled connections, and about 1 replica call in 300 then hung until its
     * timeout. This switch of Reactor Netty's closes that path. Remove it with the upgrade.
     */
    static final String KEEP_ALIVE_WORKAROUND = "reactor.netty.http.server.lastFlushWhenNoRead";

    public static void main(String[] args) throws java.io.IOException {
        if (System.getProperty(KEEP_ALIVE_WORKAROUND) == null) {
            System.setProperty(KEEP_ALIVE_WORKAROUND, "true");
        }
        if (TrainingRun.requested()) {
            // Building the image's ahead-of-time cache: the JVM writes it when this exits.
            TrainingRun.run(RingkvApplication.class);
            System.exit(0);
        }
        SpringApplication.run(RingkvApplication.class, args);
    }
}
