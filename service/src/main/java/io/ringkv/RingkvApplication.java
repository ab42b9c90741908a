package io.ringkv;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A ringkv node: serves the public API, coordinates replication and stores its share of the data. */
@SpringBootApplication
public class RingkvApplication {

    public static void main(String[] args) {
        SpringApplication.run(RingkvApplication.class, args);
    }
}
