package io.ringkv.config;

/** A setting has a value the node cannot run with; the node stops and names the setting. */
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
