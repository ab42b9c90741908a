package io.ringkv.security;

import java.util.Arrays;
import java.util.Locale;

/**
 * What a client token allows. Cumulative: {@code admin} can do all that {@code write} can, which
 * can do all that {@code read} can; the declaration order is that inclusion.
 */
public enum Role {
    /** GET of entities and ranges, Actuator's read endpoints. */
    READ,
    /** Also PUT and DELETE of entities. */
    WRITE,
    /** Also {@code /v0/cluster} and Actuator's write operations (repair, cleanup). */
    ADMIN;

    /** Whether a client with this role may do what {@code needed} allows. */
    public boolean includes(Role needed) {
        return compareTo(needed) >= 0;
    }

    /** The role as the token file and the docs write it. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The role a token file names, or null for a word that is none. */
    static Role ofLabel(String label) {
        return Arrays.stream(values()).filter(role -> role.label().equals(label)).findFirst().orElse(null);
    }
}
