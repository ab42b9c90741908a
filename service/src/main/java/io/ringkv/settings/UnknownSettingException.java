package io.ringkv.settings;

/** A {@code ringkv.*} setting was given that nothing reads; the node stops and names it. */
public final class UnknownSettingException extends RuntimeException {

    UnknownSettingException(String message) {
        super(message, null, false, false);
    }
}
