package io.ringkv.settings;

/**
 * A setting has a value the node cannot run with; the node stops and names the setting.
 *
 * Thrown by each capability's configuration as it reads its settings ({@link RingkvProperties}, or
 * its own, as {@code tls} and {@code security} have); {@link InvalidSettingFailureAnalyzer} makes
 * it the one line the node stops with.
 */
public final class InvalidSettingException extends RuntimeException {

    private final String setting;

    public InvalidSettingException(String setting, String problem) {
        super("Invalid setting " + setting + ": " + problem, null, false, false);
        this.setting = setting;
    }

    public String setting() {
        return setting;
    }
}
