package io.ringkv.config;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a bad setting into Spring Boot's short start-up failure report instead of a stack trace. */
public class InvalidSettingFailureAnalyzer extends AbstractFailureAnalyzer<InvalidSettingException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidSettingException cause) {
        return new FailureAnalysis(cause.getMessage(),
                "Correct " + cause.setting() + " (or its environment variable, "
                        + cause.setting().toUpperCase().replace('.', '_').replace("-", "") + ") and start the node again.",
                cause);
    }
}
