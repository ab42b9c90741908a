package io.ringkv.security;

/**
 * Who sent a request, as its token's line in the token file says: the name is for logs and never
 * the token itself.
 */
public record Client(String name, Role role) {
}
