package io.ringkv.settings;

/**
 * A setting has a value the node cannot run with; the node stops and names the setting.
 *
 * <p>In a package of its own, importing nothing: {@code config} throws it, and so do the
 * capabilities that read their own settings ({@code tls}, {@code security}), which {@code config}
 * wires and which therefore must not import {@code config} back.
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
